"""Server-made identifiers and timestamps."""
import os
import re
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

MAX_SLUG = 63  # an RFC 1123 DNS label
SLUG_RE = re.compile(rf"^[a-z0-9]([a-z0-9-]{{0,{MAX_SLUG - 2}}}[a-z0-9])?$")
# the longest slug (a document's maxLength)
SLUG_LENGTH = MAX_SLUG


UUID_PATTERN = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@dataclass(frozen=True)
class IdForm:
    """A server-made id: `<prefix>_` and a UUID."""

    prefix: str

    @property
    def pattern(self):
        return re.compile(rf"^{self.prefix}_{UUID_PATTERN}$")

    @property
    def max_length(self):
        return len(self.prefix) + 1 + 36

    @property
    def described(self):
        return f"{self.prefix}_ followed by a UUID"

    @property
    def example(self):
        return f"{self.prefix}_00000000-0000-7000-8000-000000000000"


# The ids one resource's records hold of another's (a platform's, token's
# or webhook's `organization`; a webhook's last event), here so that the
# schemas of all of them read one form, below the resources.
ORGANIZATION_ID = IdForm("org")
EVENT_ID_RE = re.compile(r"^evt_[0-9a-f]{16}$")
EVENT_ID_LENGTH = 4 + 16


_clock = {"ms": 0, "seq": 0}
_clock_lock = threading.Lock()


def uuid7():
    """A version 7 UUID (RFC 9562): Unix milliseconds, a counter, random bits.

    Ids made this way sort by creation time, so lists keyed on them come out
    in creation order. Within one millisecond the 12-bit counter (method 3 of
    the RFC) keeps them increasing in this process. Python 3.11 has no uuid7.
    """
    with _clock_lock:
        ms = max(time.time_ns() // 1_000_000, _clock["ms"])
        if ms == _clock["ms"]:
            seq = _clock["seq"] + 1
            if seq > 0xFFF:  # counter exhausted: borrow the next millisecond
                ms, seq = ms + 1, 0
        else:
            seq = int.from_bytes(os.urandom(2), "big") & 0x7FF  # leave room to count
        _clock.update(ms=ms, seq=seq)
    rand_b = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    return uuid.UUID(int=ms << 80 | 0x7 << 76 | seq << 64 | 0b10 << 62 | rand_b)


def new_id(prefix):
    return f"{prefix}_{uuid7()}"


def rfc3339(moment):
    """An aware datetime as stored: UTC, RFC 3339, fixed millisecond width, Z.

    Fixed width makes the strings sort in time order, so filters may compare
    them as strings.
    """
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def now_rfc3339():
    return rfc3339(datetime.now(timezone.utc))
