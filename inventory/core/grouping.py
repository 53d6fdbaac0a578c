"""`group_by` of a summary: one to three fields separated by commas, each
one the summary can count by (`labels.<key>` for any label key, quoted as
in a filter when it holds a `.` or `/`).

    group_by=environment, version
    group_by=support.status,labels.team
    group_by=labels."app.kubernetes.io/name"
"""
from inventory.core.errors import BadFilter, BadGrouping
from inventory.core.filtering import path_text, read_path
from inventory.core.labels import label_key_problem

MAX_FIELDS = 3
# characters: three fields with the longest label keys, quoted, fit
MAX_GROUP_BY = 1000
# A summary answers at most this many groups, the largest: its answer (and
# the work of shaping it) stays bounded when a field has a value per cluster.
MAX_GROUPS = 1000
LABELS = "labels"
_LABEL_FORM = ('A label is grouped by as `labels.<key>`, its key quoted when it holds a `.` '
               'or `/` (`labels."app.kubernetes.io/name"`).')


def described(fields):
    return (", ".join(f"`{name}`" for name in fields) + ' and `labels.<key>` (quoted when '
            'the key holds a `.` or `/`: `labels."app.kubernetes.io/name"`)')


def parse(text, fields):
    """The fields `text` names, in order, each as the filter writes it
    (inventory.core.filtering.path_text: `labels."app.kubernetes.io/name"`);
    BadGrouping when it is not one to three distinct fields a summary
    counts by: `fields` (a resource's declared group fields) or
    `labels.<key>`."""
    if len(text) > MAX_GROUP_BY:
        raise BadGrouping(f"At most {MAX_GROUP_BY} characters.", text[:MAX_GROUP_BY])
    names, i = [], 0
    while True:
        while i < len(text) and text[i] == " ":
            i += 1
        if i >= len(text) or text[i] == ",":
            raise BadGrouping("Give one to three field names separated by commas: an empty "
                              "entry was found.", text)
        try:
            path, i = read_path(text, i)
        except BadFilter as error:
            if text.startswith(LABELS + ".", i):
                raise BadGrouping(f"{_LABEL_FORM[:-1]}: {error.message}", text) from None
            raise BadGrouping(f"Give one to three field names separated by commas; they may "
                              f"be {described(fields)}: {error.message}", text) from None
        names.append(_field_name(path, fields, text))
        while i < len(text) and text[i] == " ":
            i += 1
        if i >= len(text):
            break
        if text[i] != ",":
            raise BadGrouping(f"Give one to three field names separated by commas; they may be "
                              f"{described(fields)}: {text[i]!r} at column {i + 1} is not "
                              "one.", text)
        i += 1
    if len(names) > MAX_FIELDS:
        raise BadGrouping(f"At most {MAX_FIELDS} fields; {len(names)} were given.", text)
    if len(set(names)) != len(names):
        raise BadGrouping("A field is given more than once.", text)
    return tuple(names)


def _field_name(path, fields, text):
    name = path_text(path)
    if name in fields:
        return name
    if path[0] == LABELS:
        if len(path) != 2:
            raise BadGrouping(f"`{name}`: {_LABEL_FORM}", text)
        problem = label_key_problem(path[1])
        if problem is not None:
            raise BadGrouping(f"`{name}`: {problem}", text)
        return name
    raise BadGrouping(f"A summary cannot count by `{name}`; it can by {described(fields)}.",
                      text)


def label_key(name):
    """The label key of a field parse() answered, or None when it is not a label."""
    if not name.startswith(LABELS + "."):
        return None
    path, _ = read_path(name)
    return path[1]
