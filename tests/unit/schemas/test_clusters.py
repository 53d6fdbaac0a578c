"""A cluster's schemas (schemas/clusters.py): the API server's endpoint an
https:// URL with a valid host (DNS name of LDH labels, IDNA, IPv4 or
[IPv6]) and port, a path of URL characters, no credentials, query,
fragment or invisible characters; a create's defaults; a change may remove
labels with null; the summary's arguments made for the group fields."""
import pytest
from marshmallow import ValidationError

from inventory.core import readiness
from inventory.resources.clusters.spec import SPEC
from schemas.clusters import (
    MAX_ENDPOINT,
    KubeClusterCreateSchema,
    KubeClusterPatchSchema,
    summary_schemas,
)

BODY = {"name": "payments", "platform": "eks-prod", "environment": "production",
        "version": "1.31.2"}


def _endpoint_refused(url):
    with pytest.raises(ValidationError) as refused:
        KubeClusterCreateSchema().load({**BODY, "endpoint": url})
    return refused.value.messages["endpoint"][0]


@pytest.mark.parametrize("url", [
    "https://api.prod.example.com:6443", "https://api.example.com", "https://10.0.0.1:443",
    "https://[2001:db8::1]:6443/k8s/clusters/c-1", "https://bücher.example/",
    "https://xn--bcher-kva.example", "https://a-b.example/path%20x/~ok;p=1",
    "https://" + "a" * 63 + ".example"])
def test_an_endpoint_is_an_https_url_of_a_valid_host(url):
    assert KubeClusterCreateSchema().load({**BODY, "endpoint": url})["endpoint"] == url


@pytest.mark.parametrize("url, said", [
    ("http://api.example.com", "https:// URL naming"),
    ("https://", "https:// URL naming"),
    ("https://user:secret@api.example.com", "credentials"),
    ("https://api.example.com/?x=1", "query or a fragment"),
    ("https://api.example.com/#top", "query or a fragment"),
    ("https://api.example.com?", "query or a fragment"),
    ("https://api.example.com:0", "valid host and port"),
    ("https://api.example.com:", "valid host and port"),
    ("https://api.example.com:99999", "valid host and port"),
    ("https://api.example.com/a b", "spaces, control"),
    ("https://api.example.com/\u202egnp.exe", "bidirectional"),
    ("https://api\u200b.example.com", "invisible"),
    ("https://-api.example.com", "valid host"),
    ("https://api_server.example.com", "valid host"),
    ("https://" + "a" * 64 + ".example", "valid host"),
    ("https://" + ".".join(["a" * 63] * 4), "valid host"),  # 255 characters: past 253
    ("https://256.1.1.1", "valid host"),
    ("https://api.example.0x10", "valid host"),  # a last label read as a number
    ("https://1.2.3", "valid host"),
    ("https://[2001:db8::1%25eth0]", "valid host"),
    ("https://[not-v6]", "valid"),
    ("https://xn--zz.example", "valid host"),
    ("https://api.example.com/<script>", "path of URL characters"),
])
def test_anything_else_is_refused_saying_why(url, said):
    assert said in _endpoint_refused(url)


def test_an_endpoint_is_bounded():
    long = "https://api.example.com/" + "a" * MAX_ENDPOINT
    assert "Longer than maximum length" in _endpoint_refused(long)


def test_a_create_has_its_defaults_and_a_kubernetes_version():
    assert KubeClusterCreateSchema().load(BODY) == {
        **BODY, "title": "", "description": "", "labels": {}, "endpoint": None}
    with pytest.raises(ValidationError) as refused:
        KubeClusterCreateSchema().load({**BODY, "version": "latest"})
    assert "version" in refused.value.messages


def test_only_a_change_removes_a_label_with_null():
    assert KubeClusterPatchSchema().load({"labels": {"team": None, "owner": "ops"}}) == {
        "labels": {"team": None, "owner": "ops"}}
    with pytest.raises(ValidationError):
        KubeClusterCreateSchema().load({**BODY, "labels": {"team": None}})


def test_the_summarys_arguments_and_answer_are_made_for_the_group_fields():
    args, answer = summary_schemas(SPEC.group_fields)
    assert args().load({"group_by": "environment, version"}) == {
        "group_by": "environment, version"}
    with pytest.raises(ValidationError) as refused:
        args().load({})
    assert "group_by" in refused.value.messages
    with pytest.raises(ValidationError):
        args().load({"group_by": ""})
    described = args().fields["group_by"].metadata["description"]
    assert all(f"`{name}`" in described for name in SPEC.group_fields)
    properties = answer().fields["groups"].inner.schema.fields["key"].metadata["properties"]
    assert set(properties) == set(SPEC.group_fields) | {"support.status", "readiness.status"}
    assert properties["support.status"]["enum"][0] == "supported"
    assert properties["readiness.status"]["enum"] == list(readiness.STATUSES)
