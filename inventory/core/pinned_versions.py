"""The check every `*_internals` module makes first: that the libraries
whose private internals it uses are the versions it was written for."""
import importlib.metadata


def check_written_for(module, written_for, what_to_do):
    """The advice a failed check gives (`module` was written for these
    versions: `what_to_do`); AssertionError, with it, when an installed
    version differs from `written_for` ({distribution: version})."""
    advice = (f"{module} was written for "
              + " and ".join(f"{name}=={version}" for name, version in written_for.items())
              + f": {what_to_do}")
    for name, version in written_for.items():
        installed = importlib.metadata.version(name)
        assert installed == version, f"{name} {installed} is installed. {advice}."
    return advice
