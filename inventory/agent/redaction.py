"""What the agent prints of others' text: a server's error message or
reason, a header it sent, an exception's words. None of it is printed as
it came: a proxy that echoes the request's `Authorization` in its 401, or a
URL with a password in it, must not put a credential into the CronJob's
log. So each such text is made one line of printable characters, capped,
with the credentials it holds redacted: the tokens the agent holds (given
as `secrets`), anything that looks like one (`Bearer ...`, an
`Authorization:` header, `token=...`), and a URL's `user:password@`.
"""
import re
import unicodedata
from urllib.parse import urlsplit, urlunsplit

MAX_SERVER_TEXT = 300  # characters of one server's text in a message
MAX_LINE = 1000  # characters of the whole line the agent prints
REDACTED = "[redacted]"

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?")
_SCHEME_CREDENTIAL = re.compile(r"(?i)\b(bearer|basic|negotiate|digest)(\s+)[A-Za-z0-9._~+/=:-]{8,}")
# A header that carries a credential: whatever follows it is one.
_HEADER_CREDENTIAL = re.compile(
    r"(?i)\b((?:proxy-)?authorization|x-api-key|cookie|set-cookie)"
    r"([\"']?\s*[:=]\s*[\"']?)(?:(?:bearer|basic)\s+)?[^\s\"'&,;}]+")
# A named value (`token=...`, `"password": "..."`): redacted when it looks
# like one (8 characters or more, no space), not in "token: the session ...".
_NAMED_CREDENTIAL = re.compile(
    r"(?i)\b(access_token|id_token|refresh_token|client_secret|token|password|passwd|secret|"
    r"api[_-]?key)([\"']?\s*[:=]\s*[\"']?)[^\s\"'&,;}]{8,}")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]*@")


def _printable(text):
    """One line: control and format characters (ANSI escapes, bidi
    overrides, line breaks) become spaces, runs of spaces one."""
    text = _ANSI.sub(" ", text)
    kept = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c
                   for c in text)
    return " ".join(kept.split())


def redacted(text, secrets=()):
    """`text` with every credential in it replaced by [redacted]."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)
    text = _SCHEME_CREDENTIAL.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)
    text = _HEADER_CREDENTIAL.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)
    return _NAMED_CREDENTIAL.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)


def _capped(text, limit):
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def server_text(text, secrets=(), limit=MAX_SERVER_TEXT):
    """A server's text (or any text not the agent's own), fit to print."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return _capped(redacted(_printable(str(text)), secrets), limit)


def line(text, secrets=()):
    """The one line the agent prints of a failure: whatever it holds, made safe again."""
    return _capped(redacted(_printable(str(text)), secrets), MAX_LINE)


def without_userinfo(url):
    """`url` without its `user:password@`, to print."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _USERINFO.sub(lambda m: m.group(1), url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def url_secrets(url):
    """The credentials a URL holds: its password (and user)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    return [value for value in (parts.password, parts.username) if value]
