"""What can happen to a data directory under a running process, each made
as an operator or a tool would make it; each returns the words the
journal names it by (`Faults`' reasons)."""
import os
import shutil


def newest_segment(directory):
    return max(name for name in os.listdir(directory) if name.startswith("journal-"))


def truncate_in_place(directory):
    """`: > journal-....jsonl`: the newest segment emptied, the same file."""
    os.truncate(directory / newest_segment(directory), 0)
    return "truncated in place"


def replace(directory):
    """A copy put in its place, as a restore tool does: the same bytes, a new file."""
    newest = newest_segment(directory)
    shutil.copy(directory / newest, directory / "copy")
    os.replace(directory / "copy", directory / newest)
    return "replaced by another file"


def delete_segment(directory):
    os.remove(directory / newest_segment(directory))
    return "was deleted"


def delete_snapshot(directory):
    os.remove(directory / next(n for n in os.listdir(directory) if n.startswith("snapshot-")))
    return "was deleted"


def empty(directory):
    for name in os.listdir(directory):
        os.remove(directory / name)
    return "was deleted"


def remove_directory(directory):
    shutil.rmtree(directory)
    return "was deleted"


def append_by_another(directory):
    with open(directory / newest_segment(directory), "ab") as other:
        other.write(b'[{"c":"things","put":{"_id":"intruder"}}]\n')
    return "written to by another process"


FAULTS = [truncate_in_place, replace, delete_segment, delete_snapshot, empty, remove_directory,
          append_by_another]


def crashed_copy(database, tmp_path):
    """The directory's files as a kill -9 of its process would leave them."""
    copy = tmp_path / "crashed"
    shutil.copytree(database.journal.directory, copy, ignore=shutil.ignore_patterns("lock"))
    return copy
