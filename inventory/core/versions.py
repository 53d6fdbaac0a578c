"""Kubernetes versions: the grammar a cluster's `version` follows, and the
key that makes versions sort and compare as versions (1.9 < 1.29), for the
store and the filter alike.

Build and pre-release suffixes (`-eks-1234`, `+k3s1`) are ignored when
comparing: v1.31.2-eks-1234 is 1.31.2, which is what an operator planning
upgrades means.
"""
import re

# A cluster's version: `1.31`, `1.31.2`, `v1.31.2-eks-1234`, `1.29.3+k3s1`.
# ([0-9], not \d: Python's \d takes any script's digits, JSON Schema's ASCII only.)
VERSION_PATTERN = r"^v?[0-9]{1,4}\.[0-9]{1,4}(\.[0-9]{1,6})?([-+][0-9A-Za-z.+-]{1,100})?$"
VERSION_RE = re.compile(VERSION_PATTERN)
MAX_VERSION_LENGTH = 1 + 4 + 1 + 4 + 1 + 6 + 1 + 100  # the longest VERSION_PATTERN matches
# What a filter may compare with: also a bare major (`"1"`); a patch only
# after a minor, so that `1.99999` is refused rather than read as 1.0.99999.
_PARTS_RE = re.compile(r"^v?(\d{1,4})(?:\.(\d{1,4})(?:\.(\d{1,6}))?)?(?:[-+].*)?$", re.ASCII)


def version_parts(text):
    """(major, minor, patch) of `v1.31.2-eks-1234`-like text, or None."""
    match = _PARTS_RE.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    return tuple(int(part or 0) for part in match.groups())


def numbers_given(text):
    """How many of major, minor and patch version `text` spells out, and
    whether a suffix follows them: (2, False) for `v1.31`, (3, True) for
    `1.31.2-eks-1`; None if it is not a version."""
    match = _PARTS_RE.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    return sum(part is not None for part in match.groups()), "-" in text or "+" in text


def parts_key(parts):
    return "%04d.%04d.%06d" % tuple(parts)


def version_key(text):
    """A string that sorts as the version does: `0001.0031.000002` for 1.31.2."""
    parts = version_parts(text)
    return None if parts is None else parts_key(parts)
