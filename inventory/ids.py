"""Server-made identifiers and timestamps."""
import os
import re
import time
import uuid
from datetime import datetime, timezone

SLUG_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
ORG_ID_RE = re.compile(rf"^org_{_UUID}$")
CLUSTER_ID_RE = re.compile(rf"^k8scl_{_UUID}$")
SCAN_ID_RE = re.compile(rf"^k8scs_{_UUID}$")


def uuid7():
    """A version 7 UUID: 48 bits of Unix milliseconds, then random bits.

    Ids made this way sort by creation time, so lists keyed on them come out
    in creation order (Python 3.11 has no uuid.uuid7).
    """
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    value &= ~(0xF << 76)
    value |= 0x7 << 76  # version
    value &= ~(0x3 << 62)
    value |= 0x2 << 62  # RFC 4122 variant
    return uuid.UUID(int=value)


def new_id(prefix):
    return f"{prefix}_{uuid7()}"


def now_rfc3339():
    """UTC now as RFC 3339 with fixed millisecond width and a Z.

    Fixed width makes the strings sort in time order, so filters may compare
    them as strings.
    """
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def is_slug(value):
    return isinstance(value, str) and SLUG_RE.match(value) is not None
