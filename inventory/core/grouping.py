"""`group_by` of a summary: one to three fields separated by commas, each
one the summary can count by (`labels.<key>` for any label key).

    group_by=environment, version
    group_by=support.status,labels.team
"""
import re

from inventory.core.errors import BadGrouping
from inventory.core.labels import LABEL_KEY_RE, MAX_LABEL_KEY

MAX_FIELDS = 3
MAX_GROUP_BY = 200  # characters: three fields with the longest label keys fit
# A summary answers at most this many groups, the largest: its answer (and
# the work of shaping it) stays bounded when a field has a value per cluster.
MAX_GROUPS = 1000
_TEXT_RE = re.compile(r"^[A-Za-z0-9_.,\- ]*$")


def described(fields):
    return ", ".join(f"`{name}`" for name in fields) + " and `labels.<key>`"


def parse(text, fields):
    """The fields `text` names, in order; BadGrouping when it is not one to
    three distinct fields a summary counts by: `fields` (a resource's
    declared group fields) or `labels.<key>`."""
    if len(text) > MAX_GROUP_BY:
        raise BadGrouping(f"At most {MAX_GROUP_BY} characters.", text[:MAX_GROUP_BY])
    if not _TEXT_RE.match(text):
        raise BadGrouping("Give one to three field names separated by commas; they may be "
                          f"{described(fields)}.", text)
    names = [part.strip() for part in text.split(",")]
    if any(not name for name in names):
        raise BadGrouping("Give one to three field names separated by commas: an empty "
                          "entry was found.", text)
    if len(names) > MAX_FIELDS:
        raise BadGrouping(f"At most {MAX_FIELDS} fields; {len(names)} were given.", text)
    for name in names:
        head, dot, key = name.partition(".")
        if name in fields or (head == "labels" and dot and LABEL_KEY_RE.match(key)):
            continue
        if head == "labels":
            raise BadGrouping(f"`{name}`: a label is grouped by as `labels.<key>`, with a "
                              f"label key (1-{MAX_LABEL_KEY} letters, digits, `-`, `_`).", text)
        raise BadGrouping(f"A summary cannot count by `{name}`; it can by {described(fields)}.",
                          text)
    if len(set(names)) != len(names):
        raise BadGrouping("A field is given more than once.", text)
    return tuple(names)
