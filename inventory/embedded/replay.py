"""A start: the data directory's newest snapshot and the journal segments
after it applied to a mongomock database, after the manifest's checks;
only once that succeeded is anything in the directory changed (a torn
last line cut off, what a finished compaction left removed).

The format, and how fast it must read: docs/design/journal.md"""
import logging
import os

import bson

from inventory.embedded import mongomock_internals
from inventory.embedded.data_directory import FILE, JournalCorrupt
from inventory.embedded.encoding import BSON_OPTIONS, decode, decode_snapshot_record
from inventory.embedded.manifest import refuse_on_evidence_of_loss
from inventory.embedded.tracking import Tracked

# the journal's parts log as one (inventory.embedded.journal), as operators filter it
log = logging.getLogger("inventory.embedded.journal")

_DictStore = mongomock_internals.DocumentsDict  # what mongomock keeps a collection's documents in
_key = mongomock_internals.document_key


def replay_directory(directory, database, chain):
    """Replay `directory` (a DataDirectory) into `database`, noting in
    `chain` the files read as they are now; the segment to append to."""
    snapshots, segments, stale, extensions = {}, {}, [], {}
    for name in os.listdir(directory.path):
        match = FILE.match(name)
        if match:
            (snapshots if match[1] == "snapshot" else segments)[int(match[2])] = name
            if match[1] == "snapshot":
                extensions[int(match[2])] = match[3]
        elif name.endswith(".tmp"):
            stale.append(name)  # a compaction that did not finish
    chain.snapshot = snapshot = max(snapshots, default=0)
    refuse_on_evidence_of_loss(directory, snapshot, snapshots, segments)
    live = sorted(number for number in segments if number >= snapshot)
    first = snapshot or 1
    expected = list(range(first, first + len(live)))
    if live != expected:
        missing = sorted(set(range(first, max(live) + 1)) - set(live))
        since = f"snapshot-{snapshot:06d}" if snapshot else "nothing"
        raise JournalCorrupt(
            f"{directory.file('journal', missing[0])} is missing (the files in "
            f"{directory.path} go from {since} to journal-{max(live):06d}); nothing "
            "was changed.")
    torn = None
    if snapshot:
        chain.snapshot_path = directory.file("snapshot", snapshot, extensions[snapshot])
        if extensions[snapshot] == "bson":
            replay_snapshot(database, chain.snapshot_path)
        else:
            replay_lines(database, chain.snapshot_path, last=False)
        chain.snapshot_size = os.path.getsize(chain.snapshot_path)
    for number in live:
        torn = replay_lines(database, directory.file("journal", number),
                            last=number == live[-1])
    # the replay succeeded: now the directory may change
    current = live[-1] if live else first
    if torn is not None:
        os.truncate(directory.file("journal", current), torn)
    for name in stale:
        os.remove(directory.join(name))
    for number, name in {**snapshots, **segments}.items():
        if number < snapshot:
            os.remove(directory.join(name))
    chain.sizes = {number: os.path.getsize(directory.file("journal", number)) for number in live}
    ended = [directory.file("journal", number) for number in live if number != current]
    for path in ([chain.snapshot_path] if chain.snapshot_path else []) + ended:
        chain.note(path)
    return current


def replay_lines(database, path, last):
    """Apply one file's lines; the length of its complete lines when its
    last line is torn (allowed only at the end of the last segment)."""
    good, collections_ = 0, {}
    with open(path, "rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.endswith(b"\n"):
                if not last:
                    raise JournalCorrupt(f"{path} line {number} is cut short, and it is not "
                                         "the end of the journal; nothing was changed.")
                log.warning("Dropping a torn last line of the journal (a crash while it "
                            "was written; its write never returned): %s line %d, %d bytes.",
                            path, number, len(line))
                return good
            try:
                apply(database, collections_, decode(line))
            except Exception as error:
                raise JournalCorrupt(
                    f"{path} line {number} is not a journal record ({error}); the store "
                    "cannot start from it, and nothing was changed. Restore the directory "
                    "from a backup, or cut the file before that line to start with what "
                    "precedes it.") from error
            good += len(line)
    return None


def replay_snapshot(database, path):
    """Apply a BSON snapshot's documents."""
    collections_, read = {}, 0
    name, stored, put_in = None, None, _DictStore.__setitem__
    with open(path, "rb") as documents:
        try:
            for document in bson.decode_file_iter(documents, BSON_OPTIONS):
                put = document.get("put")
                # a snapshot is each collection's records in a row: the
                # plain case (a string `_id` is its own key) set directly
                if put is not None and stored is not None and document["c"] == name \
                        and put["_id"].__class__ is str:
                    put_in(stored, put["_id"], put)
                else:
                    apply(database, collections_, decode_snapshot_record(document))
                    name = document.get("c")
                    stored = collections_[name][1] if name in collections_ else None
                read += 1
        except Exception as error:
            raise JournalCorrupt(
                f"{path} record {read + 1} is not a snapshot record ({error}); the "
                "store cannot start from it, and nothing was changed. Restore the "
                "directory from a backup.") from error


def apply(database, collections_, records):
    """Apply one line's records; `collections_` caches {name: (collection,
    its documents)} across a file."""
    if not isinstance(records, list):
        raise TypeError("a line must be a list of records")
    for record in records:
        name = record["c"]
        try:
            collection, documents = collections_[name]
        except KeyError:  # the first record of this collection in the file
            collection = database[name]
            store = mongomock_internals.collection_store(collection)
            documents = mongomock_internals.documents(store)
            if not isinstance(documents, Tracked):
                documents = mongomock_internals.replace_documents(store, Tracked(documents))
            collections_[name] = collection, documents
        if "put" in record:
            document = record["put"]
            _DictStore.__setitem__(documents, _key(document["_id"]), document)
        elif "del" in record:
            _DictStore.pop(documents, _key(record["del"]), None)
        elif "indexes" in record:
            collection.drop_indexes()
            for index, spec in record["indexes"].items():
                options = {k: v for k, v in spec.items() if k != "key"}
                collection.create_index([tuple(key) for key in spec["key"]], name=index,
                                        **options)
        elif record.get("drop") is True:
            collection.drop()
            del collections_[name]  # a new dict of documents
        else:
            raise ValueError(f"unknown record {sorted(record)}")
