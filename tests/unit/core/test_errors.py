"""The service's own exceptions (inventory/core/errors.py): what each
carries for the one place that maps it to the error body."""
from inventory.core import errors


def test_every_error_is_a_service_error_with_a_detail_for_the_client():
    for error in (errors.NotFound("gone"), errors.HasChildren("kids"), errors.Busy("full")):
        assert isinstance(error, errors.ServiceError) and error.detail == str(error)


def test_a_quota_exceeded_is_worded_as_kubernetes_resource_quota():
    error = errors.QuotaExceeded("kubeclusters", 10, 10)
    assert isinstance(error, errors.NotAllowed)
    assert error.detail == "exceeded quota: kubeclusters, used: 10, limited: 10"
    assert (error.quota, error.used, error.limit) == ("kubeclusters", 10, 10)


def test_a_throttled_caller_retries_after_a_whole_second_at_least():
    assert errors.Throttled("slow down", 0.2).retry_after == 1
    assert errors.Throttled("slow down", 7.9).retry_after == 7


def test_an_immutable_field_names_the_field_and_the_kind():
    error = errors.ImmutableField("platform", "cluster", "p1")
    assert isinstance(error, errors.InvalidField)
    assert (error.field, error.value) == ("platform", "p1")
    assert error.message == "The platform of a cluster cannot be changed."


def test_a_bad_filter_says_where_when_it_knows():
    placed = errors.BadFilter("an unknown field", "colour", position=7)
    assert placed.detail == "The filter is not valid: an unknown field at column 7."
    assert placed.message == "an unknown field at column 7." and placed.fragment == "colour"
    assert errors.BadFilter("empty", "").message == "empty."


def test_an_expired_event_names_it_and_what_to_do():
    error = errors.EventExpired("evt_0000000000000001", "after")
    assert (error.value, error.location) == ("evt_0000000000000001", "after")
    assert "'evt_0000000000000001'" in error.detail and "resume from the newest id" in error.detail


def test_the_database_unavailable_has_a_default_detail():
    assert "cannot be reached" in errors.Unavailable().detail
