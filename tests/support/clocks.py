"""A clock a test moves: handed to a store as its `clock` (the rollouts')."""
from datetime import datetime, timedelta, timezone

T0 = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


class Clock:
    """Now, as the test sets it: `advance(**timedelta's arguments)`."""

    def __init__(self, now=T0):
        self.now = now

    def __call__(self):
        return self.now

    def advance(self, **delta):
        self.now += timedelta(**delta)
