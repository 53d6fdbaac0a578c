"""The record filter: a subset of Google AIP-160, parsed into a small tree.

Grammar (see the README):

    expr       = and_expr { "OR" and_expr }
    and_expr   = term { "AND" term }
    term       = "NOT" term | "(" expr ")" | comparison
    comparison = field op value | field ":" (value | name | "*")
    field      = name { "." (name | "quoted string") }
    value      = "quoted string" | number | true | false

A quoted segment of a field names what no bare name can: a label key with
dots or a slash, `labels."app.kubernetes.io/name"` (AIP-160 lets a field's
segments be strings).

The design, and why: docs/design/filtering.md"""
import re
from dataclasses import dataclass
from datetime import timedelta

from inventory.core.errors import BadFilter

MAX_LENGTH = 2000
MAX_DEPTH = 32
# Each comparison and each NOT is evaluated against every record a page
# examines (up to inventory.store.pages.MAX_EXAMINED): this bounds a page's
# work on the embedded store, whose matcher takes up to some 25 microseconds
# for each (bench/filter_cost.py finds the costliest legal filter).
MAX_TERMS = 16
OPERATORS = ("<=", ">=", "!=", "=", "<", ">", ":")
KEYWORDS = {"AND", "OR", "NOT"}

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<op><=|>=|!=|=|<|>|:)
  | (?P<paren>[()])
  | (?P<dot>\.)
  | (?P<star>\*)
  | (?P<string>")
  | (?P<number>-?\d+(?:\.\d+)?(?![A-Za-z0-9_-]))
  | (?P<word>[A-Za-z0-9_][A-Za-z0-9_-]*)
""", re.VERBOSE)

class _Present:
    """The value of `field:*`: the field is present (not absent, not null)."""

    def __repr__(self):
        return "*"


PRESENT = _Present()


@dataclass(frozen=True)
class Comparison:
    field: str  # the field as path_text writes it: `labels.team`, `labels."a.b/c"`
    op: str
    value: object  # str, int, float or bool
    prefix: bool  # a string value that ended in an unescaped `*`
    position: int  # 1-based column of the field, for messages
    text: str  # the comparison as typed, for messages
    path: tuple = ()  # the field's segments, unquoted: ("labels", "app.kubernetes.io/name")
    columns: tuple = ()  # the 1-based column of each segment


@dataclass(frozen=True)
class Logical:
    op: str  # "AND" or "OR"
    operands: tuple


@dataclass(frozen=True)
class Not:
    operand: object


# A time relative to now (`occurred_on>="-PT1H"`): a negative ISO 8601
# duration in weeks, days, hours, minutes and seconds (years and months have
# no fixed length), at most MAX_BACK_DAYS back.
_DURATION_BACK = re.compile(r"^-P(?!$)(?:(\d{1,7})W)?(?:(\d{1,7})D)?"
                            r"(?:T(?!$)(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})S)?)?$")
MAX_BACK_DAYS = 36_500


def duration_back(text):
    """The timedelta of a relative time (`"-PT1H"`, `"-P30D"`), None when
    `text` is not one; BadFilter-worthy ValueError past MAX_BACK_DAYS."""
    match = _DURATION_BACK.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    weeks, days, hours, minutes, seconds = (int(part or 0) for part in match.groups())
    back = timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)
    if back > timedelta(days=MAX_BACK_DAYS):
        raise ValueError(f"a relative time goes back at most {MAX_BACK_DAYS} days")
    return back


def has_relative_time(tree):
    """Whether a comparison of `tree` holds a relative time (which a walk
    resolves once, against the instant its first page was asked for)."""
    if isinstance(tree, Logical):
        return any(has_relative_time(operand) for operand in tree.operands)
    if isinstance(tree, Not):
        return has_relative_time(tree.operand)
    return isinstance(tree.value, str) and tree.value.startswith("-P") and not tree.prefix


def filter_error(message, fragment, position=None):
    return BadFilter(message, fragment, position)


@dataclass
class _Token:
    kind: str
    value: object
    start: int  # 0-based offset
    end: int
    escaped_star: bool = False


def _read_string(text, start):
    """A double-quoted string at `start`; backslash escapes the next character."""
    out, i, escaped_star = [], start + 1, False
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 >= len(text):
                break
            out.append(text[i + 1])
            escaped_star = text[i + 1] == "*" and (i + 2 < len(text) and text[i + 2] == '"')
            i += 2
            continue
        if char == '"':
            return _Token("string", "".join(out), start, i + 1, escaped_star)
        out.append(char)
        escaped_star = False
        i += 1
    raise filter_error("unterminated string", text[start:start + 40], start + 1)


_BARE_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")


def path_text(segments):
    """A field path as the grammar writes it: each segment bare where it
    reads back as itself (`labels.team`), else quoted
    (`labels."app.kubernetes.io/name"`). One spelling per field: the
    filter's messages, `group_by`'s group names and an event's change
    paths use it."""
    return ".".join(segment if _BARE_SEGMENT.fullmatch(segment) and segment not in KEYWORDS
                    else _quoted(segment) for segment in segments)


def _quoted(segment):
    return '"' + segment.replace("\\", "\\\\").replace('"', '\\"') + '"'


def read_path(text, start=0):
    """(segments, end) of the field path at `start` in `text` (for
    `group_by`, whose fields are written as the filter's);
    BadFilter, with the column, when there is none or a quote is not closed."""
    segments, i = [], start
    while True:
        if i < len(text) and text[i] == '"' and segments:
            token = _read_string(text, i)
            segments.append(token.value)
            i = token.end
        else:
            match = _BARE_SEGMENT.match(text, i)
            if match is None:
                raise filter_error("a field name is expected", text[i:i + 40], i + 1)
            segments.append(match.group())
            i = match.end()
        if i >= len(text) or text[i] != ".":
            return tuple(segments), i
        i += 1


def tokenize(text):
    tokens, i = [], 0
    while i < len(text):
        match = _TOKEN.match(text, i)
        if match is None:
            raise filter_error(f"unexpected character {text[i]!r}", text[i:i + 20], i + 1)
        kind = match.lastgroup
        if kind == "string":
            token = _read_string(text, i)
            tokens.append(token)
            i = token.end
            continue
        if kind != "space":
            raw = match.group()
            value = raw
            if kind == "number":
                value = float(raw) if "." in raw else int(raw)
            elif kind == "word" and raw in KEYWORDS:
                kind = "keyword"
            tokens.append(_Token(kind, value, i, match.end()))
        i = match.end()
    return tokens


class _Parser:
    def __init__(self, text):
        self.text = text
        self.tokens = tokenize(text)
        self.index = 0
        self.terms = 0  # comparisons and NOTs

    def peek(self):
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self):
        token = self.peek()
        self.index += 1
        return token

    def fragment(self, token):
        return self.text[token.start:token.start + 40] if token else self.text[-40:]

    def expect_more(self, after):
        if self.peek() is None:
            raise filter_error(f"the filter ends after {after!r}; something must follow",
                               self.text[-40:], len(self.text))

    def parse(self):
        if not self.tokens:
            raise filter_error("the filter is empty", self.text)
        tree = self.expr(1)
        token = self.peek()
        if token is not None:
            raise filter_error(f"unexpected {token.value!r}", self.fragment(token), token.start + 1)
        return tree

    def expr(self, depth):
        return self._chain("OR", self.and_expr, depth)

    def and_expr(self, depth):
        return self._chain("AND", self.term, depth)

    def _chain(self, keyword, operand, depth):
        items = [operand(depth)]
        while (token := self.peek()) is not None and token.kind == "keyword" \
                and token.value == keyword:
            self.take()
            self.expect_more(keyword)
            items.append(operand(depth))
        return items[0] if len(items) == 1 else Logical(keyword, tuple(items))

    def term(self, depth):
        if depth > MAX_DEPTH:
            token = self.peek()
            raise filter_error(f"nested deeper than {MAX_DEPTH} levels",
                               self.fragment(token), token.start + 1 if token else None)
        token = self.peek()
        if token is None:
            raise filter_error("a comparison is missing at the end", self.text[-40:], len(self.text))
        if token.kind == "keyword" and token.value == "NOT":
            self.count_term(token)
            self.take()
            self.expect_more("NOT")
            return Not(self.term(depth + 1))
        if token.kind == "paren" and token.value == "(":
            self.take()
            self.expect_more("(")
            inner = self.expr(depth + 1)
            closing = self.take()
            if closing is None or closing.value != ")":
                raise filter_error("a '(' is not closed", self.fragment(token), token.start + 1)
            return inner
        return self.comparison()

    def count_term(self, token):
        self.terms += 1
        if self.terms > MAX_TERMS:
            raise filter_error(f"more than {MAX_TERMS} comparisons and NOTs in all",
                               self.fragment(token), token.start + 1)

    def comparison(self):
        first = self.peek()
        self.count_term(first)
        path, columns = self.field()
        field = path_text(path)
        op = self.take()
        if op is None or op.kind != "op":
            raise filter_error(f"an operator ({', '.join(OPERATORS)}) must follow {field!r}",
                               self.fragment(op or first), (op or first).start + 1)
        value_token = self.take()
        if value_token is None:
            raise filter_error(f"a value must follow {op.value!r}", self.fragment(first),
                               first.start + 1)
        value, prefix = self.value(value_token, op.value)
        text = self.text[first.start:value_token.end]
        return Comparison(field, op.value, value, prefix, first.start + 1, text, path, columns)

    def field(self):
        """(segments, their columns) of the field at the next tokens."""
        segments, columns = [], []
        while True:
            token = self.take()
            if token is not None and (token.kind == "word" or (
                    token.kind == "number" and self.text[token.start:token.end].isdigit())):
                segments.append(self.text[token.start:token.end])  # `007` stays itself
            elif token is not None and token.kind == "string" and segments:
                segments.append(token.value)
            else:
                bad = token or self.tokens[-1]
                raise filter_error("a field name is expected", self.fragment(token),
                                   bad.start + 1)
            columns.append(token.start + 1)
            if (nxt := self.peek()) is None or nxt.kind != "dot":
                return tuple(segments), tuple(columns)
            self.take()

    def value(self, token, op):
        if token.kind == "string":
            text = token.value
            if text.endswith("*") and not token.escaped_star:
                return text[:-1], True
            return text, False
        if token.kind == "number":
            return token.value, False
        if token.kind == "word" and token.value in ("true", "false"):
            return token.value == "true", False
        if token.kind == "word" and op == ":":
            return token.value, False  # a bare name: `labels:team`
        if token.kind == "star":
            if op != ":":
                raise filter_error(f"a bare * asks whether a field is present and follows ':' "
                                   f"(last_scanned_on:*), not {op!r}; a prefix is quoted: "
                                   '"Acme*"', self.fragment(token), token.start + 1)
            return PRESENT, False
        raise filter_error("a value (a quoted string, a number, true or false) is expected",
                           self.fragment(token), token.start + 1)


def parse(text):
    """The tree of a filter; a 422 at `query.filter` if it is not valid."""
    if len(text) > MAX_LENGTH:
        raise filter_error(f"the filter is longer than {MAX_LENGTH} characters", text[:40])
    return _Parser(text).parse()
