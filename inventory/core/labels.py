"""The label rules, one home for the schemas (a request's labels), the store
(a record's labels after a merge), the filter and `group_by`
(`labels.<key>`, `labels."<key>"`).

A key is a Kubernetes label key, exactly as the API server checks one
(k8s.io/apimachinery, validation.IsQualifiedName): an optional prefix, a
DNS-1123 subdomain of at most 253 characters, and a `/`; then a name of 1 to
63 characters of `A-Za-z0-9`, `-`, `_` and `.`, beginning and ending with a
letter or digit (`team`, `app.kubernetes.io/name`). A key is never stored
as is where MongoDB could read its dots as nesting: the store keeps it in
an escaped form (inventory.store.document_keys).

Values keep the service's own rule, a superset of Kubernetes': up to
MAX_LABEL_VALUE characters of single-line text (Kubernetes allows 63 of the
name's characters, or ""). The design, and why: docs/design/filtering.md
("Label keys")."""
import re

MAX_LABELS = 64
MAX_LABEL_VALUE = 256
MAX_LABEL_NAME = 63  # validation.qualifiedNameMaxLength
MAX_LABEL_PREFIX = 253  # validation.DNS1123SubdomainMaxLength
MAX_LABEL_KEY = MAX_LABEL_PREFIX + 1 + MAX_LABEL_NAME

_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
_DNS_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*"
_NAME_RE = re.compile(_NAME)
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN)
# The key rule as a JSON Schema pattern (with maxLength MAX_LABEL_KEY): all
# of it but the prefix's own bound of 253, which a pattern without
# lookahead cannot say; the server checks that too.
LABEL_KEY_PATTERN = rf"^(?:{_SUBDOMAIN}/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{{0,61}}[A-Za-z0-9])?$"
LABEL_KEY_RULE = (f"a Kubernetes label key: an optional prefix (a DNS subdomain of at most "
                  f"{MAX_LABEL_PREFIX} characters: lowercase letters, digits, `-` and `.`) and "
                  f"a `/`, then a name of 1 to {MAX_LABEL_NAME} letters, digits, `-`, `_` and "
                  "`.` that begins and ends with a letter or digit (`team`, "
                  "`app.kubernetes.io/name`)")


def label_key_problem(key):
    """What is wrong with `key` as a label key, naming the part that is
    wrong (a sentence), or None when it is one."""
    if not isinstance(key, str) or not key:
        return f"A label key is {LABEL_KEY_RULE}; it cannot be empty."
    if len(key) > MAX_LABEL_KEY:
        return f"A label key is at most {MAX_LABEL_KEY} characters; this one has {len(key)}."
    prefix, slash, name = key.rpartition("/")
    if slash and "/" in prefix:
        return "A label key has at most one `/`, between its prefix and its name."
    if slash:
        if not prefix:
            return "The label key's prefix (before `/`) is empty: leave out the `/` too."
        if len(prefix) > MAX_LABEL_PREFIX:
            return (f"The label key's prefix (before `/`) is at most {MAX_LABEL_PREFIX} "
                    f"characters; this one has {len(prefix)}.")
        if not _SUBDOMAIN_RE.fullmatch(prefix):
            return (f"The label key's prefix `{prefix}` is not a DNS subdomain: lowercase "
                    "letters, digits, `-` and `.`, each part between dots beginning and "
                    "ending with a letter or digit (`app.kubernetes.io`).")
    where = "name (after `/`)" if slash else "name"
    if not name:
        return f"The label key's {where} is empty."
    if len(name) > MAX_LABEL_NAME:
        return (f"The label key's {where} is at most {MAX_LABEL_NAME} characters; this one "
                f"has {len(name)}.")
    if not _NAME_RE.fullmatch(name):
        return (f"The label key's {where} `{name}` must be letters, digits, `-`, `_` and `.`, "
                "beginning and ending with a letter or digit.")
    return None


def is_label_key(key):
    return label_key_problem(key) is None
