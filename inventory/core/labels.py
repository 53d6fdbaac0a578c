"""The label rules, one home for the schemas (a request's labels), the store
(a record's labels after a merge) and the filter (`labels.<key>`).

Keys are restricted so that `labels.<key>` is unambiguous in filters and in
MongoDB paths (no dots, no `$`).
"""
import re

MAX_LABEL_KEY = 63
LABEL_KEY_PATTERN = rf"^[A-Za-z0-9]([A-Za-z0-9_-]{{0,{MAX_LABEL_KEY - 2}}}[A-Za-z0-9])?$"
LABEL_KEY_RE = re.compile(LABEL_KEY_PATTERN)
MAX_LABELS = 64
MAX_LABEL_VALUE = 256
