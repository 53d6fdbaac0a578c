"""The service's own errors: what went wrong, in the service's terms.

The store, the filter parser and the continuation tokens raise these. They
know nothing of HTTP: `inventory.http.errors` is the one place that turns each
into a status, the `errors[].location` it points at, and the error body.
"""


class ServiceError(Exception):
    """Base of the service's errors; `detail` is fit for a client."""

    def __init__(self, detail):
        super().__init__(detail)
        self.detail = detail


class NotFound(ServiceError):
    """No such record, or not one the caller may see."""


class NotAuthenticated(ServiceError):
    """No credentials, or unknown ones (`invalid_token`)."""

    def __init__(self, detail, invalid_token=False):
        super().__init__(detail)
        self.invalid_token = invalid_token


class NotAllowed(ServiceError):
    """The caller's role or organization scope does not allow this."""


class QuotaExceeded(NotAllowed):
    """A create would take its organization past one of its quotas."""

    def __init__(self, quota, used, limit):
        # worded as Kubernetes' ResourceQuota answers
        super().__init__(f"exceeded quota: {quota}, used: {used}, limited: {limit}")
        self.quota, self.used, self.limit = quota, used, limit


class Throttled(ServiceError):
    """The caller sent more than its limits allow: retry after `retry_after`
    seconds (a whole number, at least 1)."""

    def __init__(self, detail, retry_after):
        super().__init__(detail)
        self.retry_after = max(1, int(retry_after))


class Unavailable(ServiceError):
    """The database cannot be reached."""

    def __init__(self, detail="The database cannot be reached; try again shortly."):
        super().__init__(detail)


class InvalidField(ServiceError):
    """A field of the submitted record is not acceptable; `field` is its API
    name (dotted for nesting), None for the record as a whole."""

    def __init__(self, field, message, value=None):
        super().__init__(message)
        self.field, self.message, self.value = field, message, value


class InvalidReference(InvalidField):
    """A field names a record that does not exist (or went away meanwhile)."""


class ImmutableField(InvalidField):
    """A change would alter a field that never changes."""

    def __init__(self, field, kind, value):
        super().__init__(field, f"The {field} of a {kind} cannot be changed.", value)


class InvalidRecord(InvalidField):
    """The record, as the change would leave it, breaks a rule (a limit)."""


class StaleRevision(ServiceError):
    """The record is no longer at a revision the caller named (If-Match)."""


class HasChildren(ServiceError):
    """The record has children, and the delete was not forced."""


class KeyInUse(ServiceError):
    """Another record has this key."""


class Contended(ServiceError):
    """Others changed the same thing at once, too often: retry."""


class NotNow(ServiceError):
    """The record is not in a state that allows this (a rollout's stage that
    is not held cannot be approved)."""


class KeyReused(ServiceError):
    """An idempotency key already used with a different request."""

    def __init__(self, detail, key):
        super().__init__(detail)
        self.key = key


class InProgress(ServiceError):
    """A request with this idempotency key is still running."""


class BadFilter(ServiceError):
    """A filter that is not valid; `fragment` is the offending part."""

    def __init__(self, message, fragment, position=None):
        where = f" at column {position}" if position else ""
        super().__init__(f"The filter is not valid: {message}{where}.")
        self.message, self.fragment = f"{message}{where}.", fragment


class BadContinuation(ServiceError):
    """A continuation token that is not one of this list, filter and caller."""

    def __init__(self, detail, token):
        super().__init__(detail)
        self.token = token


class BadOrdering(ServiceError):
    """An `order_by` that is not the grammar, or not an ordering the list serves."""

    def __init__(self, detail, text):
        super().__init__(detail)
        self.text = text


class BadResumePoint(ServiceError):
    """A resume point (`after`, `Last-Event-ID`) that is not an event id;
    `location` says which of them."""

    def __init__(self, detail, value, location):
        super().__init__(detail)
        self.value, self.location = value, location


class EventExpired(ServiceError):
    """A resume point older than the oldest event the feed keeps."""

    def __init__(self, event_id, location):
        super().__init__(f"The feed no longer keeps {event_id!r} and what followed it; "
                         "list the events again and resume from the newest id.")
        self.value, self.location = event_id, location


class Busy(ServiceError):
    """The process serves as many of these as it may: retry shortly."""


class BadGrouping(ServiceError):
    """A `group_by` that names no field a summary can count by."""

    def __init__(self, detail, text):
        super().__init__(detail)
        self.text = text
