"""The hub's ClusterProfiles (inventory/clusterprofiles/hub.py), with the
official client's CustomObjectsApi stood in for (no API server): the
namespace's profiles read in pages and kept as the syncer keeps them;
a profile that is not there read as None; patches as merge patches, the
status through its subresource; a delete conditional on the profile's uid,
one already gone not a failure; every failure one HubError line, with the
API server's status and Status message, or "could not be reached"; a
kubeconfig the hub cannot be found by, one line too. Against a real
kube-apiserver: tests/system/test_clusterprofiles_kube.py."""
import json

import pytest
import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from inventory.clusterprofiles.hub import MERGE_PATCH, Hub, HubError, configuration
from inventory.clusterprofiles.profiles import API_VERSION, GROUP, PLURAL

NAMESPACE = "fleet"


def _profile(name, uid="u1", status=None):
    return {"apiVersion": f"{GROUP}/{API_VERSION}", "kind": "ClusterProfile",
            "metadata": {"name": name, "uid": uid, "labels": {"x": "y"},
                         "managedFields": [{"manager": "someone"}]},
            "spec": {"displayName": name}, "status": status or {"version": {"kubernetes": "1.31"}}}


def _refusal(status, reason, message=None):
    error = ApiException(status=status, reason=reason)
    error.body = None if message is None else json.dumps({"kind": "Status", "message": message})
    return error


class CustomObjects:
    """CustomObjectsApi's calls the hub makes: recorded, each answered by
    `answers[method]` (a list, taken in turn; an exception is raised)."""

    def __init__(self, **answers):
        self.answers = {method: list(given) for method, given in answers.items()}
        self.calls = []

    def __getattr__(self, method):
        def call(*args, **kwargs):
            self.calls.append((method, args, kwargs))
            answer = self.answers[method].pop(0)
            if isinstance(answer, BaseException):
                raise answer
            return answer
        return call


@pytest.fixture
def hub():
    hub = Hub(client.Configuration(host="https://hub.example.com"), NAMESPACE, timeout=7.0)
    yield hub
    hub.close()


def test_the_profiles_are_read_in_pages_and_kept_as_the_syncer_keeps_them(hub):
    hub.api = CustomObjects(list_namespaced_custom_object=[
        {"items": [_profile("a"), _profile("b")], "metadata": {"continue": "t1"}},
        {"items": [_profile("c", status={"x": 1})], "metadata": {}}])
    profiles = hub.profiles()
    assert list(profiles) == ["a", "b", "c"]
    assert profiles["c"] == {"metadata": {"name": "c", "uid": "u1", "labels": {"x": "y"}},
                             "spec": {"displayName": "c"}, "status": '{"x":1}'}
    (_, first_args, first), (_, _, second) = hub.api.calls
    assert first_args == (GROUP, API_VERSION, NAMESPACE, PLURAL)
    assert (first["limit"], first["_continue"], second["_continue"]) == (500, None, "t1")
    assert first["_request_timeout"] == (7.0, 7.0)


def test_an_empty_namespace_has_no_profiles(hub):
    hub.api = CustomObjects(list_namespaced_custom_object=[{"items": None}])
    assert hub.profiles() == {}


def test_a_profile_that_is_not_there_is_read_as_none_other_failures_raise(hub):
    hub.api = CustomObjects(get_namespaced_custom_object=[
        _profile("a"), _refusal(404, "Not Found"),
        _refusal(403, "Forbidden", 'clusterprofiles "a" is forbidden:\n  User "x" cannot get')])
    assert hub.read("a")["metadata"]["name"] == "a"
    assert hub.read("a") is None
    with pytest.raises(HubError) as refused:
        hub.read("a")
    assert refused.value.status == 403
    assert str(refused.value) == ('get clusterprofile a: 403 clusterprofiles "a" is forbidden: '
                                  'User "x" cannot get')  # the Status message, in one line


def test_without_a_status_message_the_reason_is_said(hub):
    hub.api = CustomObjects(create_namespaced_custom_object=[_refusal(422, "Unprocessable")])
    with pytest.raises(HubError, match=r"^create clusterprofile a: 422 Unprocessable$"):
        hub.create(_profile("a"))


def test_patches_are_merge_patches_the_status_through_its_subresource(hub):
    hub.api = CustomObjects(patch_namespaced_custom_object=[{}],
                            patch_namespaced_custom_object_status=[{}])
    hub.patch("a", {"spec": {"displayName": "A"}})
    hub.patch_status("a", {"version": {"kubernetes": "1.32"}})
    (spec_method, spec_args, spec_options), (status_method, status_args, status_options) = \
        hub.api.calls
    assert spec_method == "patch_namespaced_custom_object"
    assert spec_args[-2:] == ("a", {"spec": {"displayName": "A"}})
    assert status_method == "patch_namespaced_custom_object_status"
    assert status_args[-2:] == ("a", {"status": {"version": {"kubernetes": "1.32"}}})
    assert spec_options["_content_type"] == status_options["_content_type"] == MERGE_PATCH


def test_a_delete_is_only_of_the_profile_of_its_uid_and_one_gone_is_no_failure(hub):
    hub.api = CustomObjects(delete_namespaced_custom_object=[
        {}, _refusal(404, "Not Found"), _refusal(409, "Conflict", "Precondition failed: UID")])
    hub.delete("a", "u1")
    assert hub.api.calls[0][2]["body"]["preconditions"] == {"uid": "u1"}
    hub.delete("a", "u1")  # gone meanwhile
    with pytest.raises(HubError) as refused:  # made anew meanwhile: it stays
        hub.delete("a", "u1")
    assert refused.value.status == 409


def test_a_hub_that_cannot_be_reached_is_one_line(hub):
    hub.api = CustomObjects(list_namespaced_custom_object=[
        urllib3.exceptions.MaxRetryError(None, "/apis", "Connection refused\n  (errno 111)")])
    with pytest.raises(HubError) as failed:
        hub.profiles()
    assert str(failed.value).startswith(f"list clusterprofiles in {NAMESPACE}: the hub could "
                                        "not be reached: ")
    assert "\n" not in str(failed.value) and failed.value.status is None


def test_a_kubeconfig_the_hub_cannot_be_found_by_is_one_line(tmp_path):
    with pytest.raises(HubError) as failed:
        configuration(str(tmp_path / "missing"), None, {})
    assert "\n" not in str(failed.value) and str(failed.value)
