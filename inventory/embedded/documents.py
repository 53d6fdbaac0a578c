"""A stored document's copies: whole, projected, or with a write applied.

A stored document is a tree of dicts and lists whose every other value is
immutable; nothing handed out of the embedded store shares a container
with what it keeps (but `Reads.uncopied`'s readers, which copy as they
read), and a write by key stores a new document rather than changing one
a read may have handed out (docs/design/embedded-store.md, "Reads that
show")."""
_CONTAINERS = (dict, list)


def plain_inclusion(projection):
    """No projection, or one that includes top-level fields and nothing else
    (but may leave `_id` out)."""
    return projection is None or all(
        (value in (1, True) or (key == "_id" and value in (0, False)))
        and "." not in key and not key.startswith("$")
        for key, value in projection.items())


def copy_stored(value):
    """A copy of a stored document: its containers are dicts and lists, and
    everything else in it is immutable (a plain recursion that skips the
    leaves is several times faster than copy.deepcopy)."""
    if isinstance(value, dict):
        return {key: copy_stored(inner) if isinstance(inner, _CONTAINERS) else inner
                for key, inner in value.items()}
    if isinstance(value, list):
        return [copy_stored(inner) if isinstance(inner, _CONTAINERS) else inner for inner in value]
    return value


def projected(document, projection, copied=True):
    """A copy of `document` with the fields of an inclusion projection;
    not `copied`, the stored document itself when there is no projection
    (`Reads.uncopied`)."""
    if projection:
        keep_id = projection.get("_id", True) not in (0, False)
        document = {k: v for k, v in document.items()
                    if (k == "_id" and keep_id) or (k != "_id" and projection.get(k))}
    return copy_stored(document) if copied else document


def updated_copy(document, update):
    """A copy of `document` with `$set`/`$unset` (dotted paths) applied, or
    None where a path runs through something that is not an object (left to
    mongomock, which knows the error to raise)."""
    document = copy_stored(document)
    for update_operator, changes in update.items():
        for path, value in changes.items():
            *parents, last = path.split(".")
            node = document
            for part in parents:
                if part not in node:
                    if update_operator == "$unset":
                        break
                    node[part] = {}
                node = node[part]
                if not isinstance(node, dict):
                    return None
            else:
                if update_operator == "$set":
                    node[last] = copy_stored(value)
                elif update_operator == "$inc":
                    if type(value) is not int or type(node.get(last, 0)) is not int:
                        return None  # mongomock knows the other numbers' rules
                    node[last] = node.get(last, 0) + value
                else:
                    node.pop(last, None)
    return document

