"""The URLs the service puts in answers, and the hosts they may name
(inventory/http/schema_urls.py)."""
import pytest

from inventory.http.schema_urls import describing_link, host_allowed, host_name, schema_url


@pytest.mark.parametrize("host, name", [
    ("Example.COM", "example.com"), ("example.com:8000", "example.com"),
    ("[::1]:8000", "[::1]"), ("[::1]", "[::1]"), ("::1", "::1")])
def test_a_hosts_name_without_its_port(host, name):
    assert host_name(host) == name


def test_which_hosts_are_allowed():
    allowed = ("inventory.example.com", ".corp.example")
    assert host_allowed("inventory.example.com:443", allowed)
    assert host_allowed("a.corp.example", allowed) and host_allowed("corp.example", allowed)
    assert not host_allowed("evil.example.com", allowed)
    assert not host_allowed("xcorp.example", allowed)
    assert host_allowed("anything", ("*",))


def test_urls_name_an_allowed_host_and_never_a_forged_one(app):
    app.config["ALLOWED_HOSTS"] = ["inventory.example.com"]
    with app.test_request_context("/", base_url="https://inventory.example.com"):
        assert schema_url("KubeCluster") == "https://inventory.example.com/schemas/KubeCluster.json"
        assert describing_link("Error") == \
            '<https://inventory.example.com/schemas/Error.json>; rel="describedBy"'
    with app.test_request_context("/", base_url="https://evil.example.org"):
        assert schema_url("Error") == "/schemas/Error.json"
