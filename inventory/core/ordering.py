"""`order_by`: the orderings each list declares, and the parameter's
grammar (Google AIP-132): fields separated by commas, each optionally
followed by `desc` (or `asc`), as in `environment, version desc`.

A list declares the orderings it serves, each with its exact reverse (every
field's direction flipped). One ordering is one range walk over one index
on MongoDB: a declared ordering is one the store keeps an index for, so
any page of it costs the same at any depth. A single field is declared for
every field a list may be ordered by; a few multi-field orderings are
declared where a dashboard needs them. Ties are broken by the record's key.
"""
import re
from dataclasses import dataclass

from inventory.core.errors import BadOrdering

MAX_ORDER_BY = 200  # characters: more than any declared ordering needs
# (quotes, `/` and `-`: a label key, `labels."app.kubernetes.io/name"`, is
# read far enough to be told that lists are not ordered by labels)
_TEXT_RE = re.compile(r'^[A-Za-z0-9_.,"/\- ]*$')


@dataclass(frozen=True)
class Ordering:
    """Fields and directions: ((field, descending), ...)."""

    fields: tuple

    @property
    def text(self):
        return ", ".join(f"{name} desc" if descending else name
                         for name, descending in self.fields)

    def reversed(self):
        return Ordering(tuple((name, not descending) for name, descending in self.fields))


def parse(text):
    """The Ordering `text` asks for; BadOrdering if it is not the grammar."""
    if len(text) > MAX_ORDER_BY:
        raise BadOrdering(f"At most {MAX_ORDER_BY} characters.", text[:MAX_ORDER_BY])
    if not _TEXT_RE.match(text):  # no tabs, line breaks or other spaces as separators
        raise BadOrdering("Only field names, commas, spaces and `desc` (or `asc`) may "
                          "appear.", text)
    fields, seen = [], set()
    for part in text.split(","):
        words = part.split()
        if not words:
            raise BadOrdering("Give fields separated by commas, each optionally followed "
                              "by `desc`: an empty entry was found.", text)
        if len(words) > 2 or (len(words) == 2 and words[1] not in ("asc", "desc")):
            raise BadOrdering(f"`{part.strip()}`: a field may be followed only by `desc` "
                              "(or `asc`).", text)
        name = words[0]
        if name in seen:
            raise BadOrdering(f"`{name}` is given more than once.", text)
        seen.add(name)
        fields.append((name, len(words) == 2 and words[1] == "desc"))
    return Ordering(tuple(fields))


@dataclass(frozen=True)
class Orderings:
    """The orderings one list declares (each with its reverse)."""

    declared: tuple  # of Ordering, each starting ascending

    @classmethod
    def of(cls, *texts):
        return cls(tuple(parse(text) for text in texts))

    @property
    def fields(self):
        names = []
        for ordering in self.declared:
            names.extend(name for name, _ in ordering.fields if name not in names)
        return names

    def describe(self):
        """The orderings as the document and the 422 list them."""
        single = [o.fields[0][0] for o in self.declared if len(o.fields) == 1]
        several = [f"`{o.text}`" for o in self.declared if len(o.fields) > 1]
        text = ", ".join(f"`{name}`" for name in single)
        if several:
            text += "; and " + ", ".join(several)
        return text + " (each also reversed: `desc` after a field flips it)"

    def examples(self):
        """A few `order_by` values this list serves, for the document."""
        first, last = self.declared[0], self.declared[-1]
        return list(dict.fromkeys([first.text, last.reversed().text, last.text]))

    def resolve(self, text):
        """(declared Ordering, walked backwards) for `order_by` text;
        BadOrdering when the list does not serve it."""
        try:
            asked = parse(text)
        except BadOrdering as error:
            raise BadOrdering(f"{error.detail} This list can be ordered by "
                              f"{self.describe()}.", error.text) from None
        for ordering in self.declared:
            if asked == ordering:
                return ordering, False
            if asked == ordering.reversed():
                return ordering, True
        unknown = [name for name, _ in asked.fields if name not in self.fields]
        if unknown:
            why = ""
            if unknown[0].split(".")[0] == "labels":
                why = (" Lists are not ordered by labels: each ordering is one the store "
                       "keeps an index for, and a label key is any of many; filter by a "
                       'label, or count by one with a summary\'s `group_by=labels."<key>"`.')
            raise BadOrdering(f"This list cannot be ordered by `{unknown[0]}`.{why} It can be "
                              f"ordered by {self.describe()}.", text)
        raise BadOrdering(f"This list does not serve `{asked.text}`. It can be ordered by "
                          f"{self.describe()}.", text)
