"""The SSRF guard's rules (inventory.core.outbound): which addresses a
webhook may reach, and what an entry of WEBHOOK_ALLOWED_HOSTS allows."""
import socket

import pytest

from inventory.config import Config
from inventory.core import outbound

# address -> what refuses it (None: globally routable, allowed)
ADDRESSES = [
    ("8.8.8.8", None),
    ("2001:4860:4860::8888", None),
    ("::ffff:8.8.8.8", None),  # IPv4-mapped public address
    ("2002:808:808::", None),  # 6to4 wrapping a public address
    ("64:ff9b::808:808", None),  # NAT64 of a public address
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.100.100.200", "carrier-grade NAT"),  # a cloud's metadata service
    ("127.0.0.1", "loopback"),
    ("10.1.2.3", "private"),
    ("169.254.169.254", "link-local"),
    ("0.0.0.0", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("ff0e::1", "multicast"),
    ("192.0.0.8", "special-purpose"),
    ("198.18.0.1", "private"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("fe80::1%eth0", "link-local"),
    ("fd00::1", "private"),
    ("fec0::1", "site-local"),
    ("::ffff:127.0.0.1", "loopback address (127.0.0.1, in the IPv4-mapped"),
    ("::ffff:100.64.0.1", "carrier-grade NAT (shared) address (100.64.0.1, in the IPv4-mapped"),
    ("2002:7f00:1::", "loopback address (127.0.0.1, in the 6to4"),
    ("2002:a9fe:a9fe::", "link-local address (169.254.169.254, in the 6to4"),
    ("64:ff9b::7f00:1", "loopback address (127.0.0.1, in the NAT64"),
    ("64:ff9b::6464:64c8", "carrier-grade NAT (shared) address (100.100.100.200, in the NAT64"),
    # Teredo: server 65.54.227.120, client 10.0.0.1 (stored inverted)
    ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private address (10.0.0.1, in the Teredo"),
    ("64:ff9b:1::a00:1", "reserved"),  # a local NAT64 prefix: not the well-known one
    ("::7f00:1", "reserved"),  # IPv4-compatible, deprecated
]


@pytest.mark.parametrize("address, refused", ADDRESSES)
def test_only_globally_routable_addresses_pass(address, refused):
    reason = outbound.refused_address(address)
    if refused is None:
        assert reason is None
    else:
        assert reason is not None and refused in reason


def resolves_to(*found):
    def resolve(host, port, **kwargs):
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                 (a, port)) for a in found]
    return resolve


@pytest.mark.parametrize("address", ["100.64.0.1", "2002:7f00:1::", "64:ff9b::a9fe:a9fe"])
def test_a_name_resolving_to_a_wrapped_or_shared_address_is_refused(address):
    with pytest.raises(outbound.TargetRefused, match="hooks.example.com is or resolves to"):
        outbound.check("https://hooks.example.com/x", resolve=resolves_to(address))
    # allowed: the same name, listed
    outbound.check("https://hooks.example.com/x", ["hooks.example.com"],
                   resolve=resolves_to(address))


# entry -> (host, port) it allows; None: a malformed entry
ENTRIES = [
    ("hooks.internal", ("hooks.internal", None)),
    ("Hooks.Internal:8443", ("hooks.internal", 8443)),
    ("10.0.0.7:443", ("10.0.0.7", 443)),
    ("[fd00::7]:8443", ("fd00::7", 8443)),
    ("[FD00:0::7]", ("fd00::7", None)),
    ("fd00::7", ("fd00::7", None)),  # a bare IPv6 literal: every port
    ("hooks.internal:0", None),
    ("hooks.internal:65536", None),
    ("hooks.internal:https", None),
    ("[fd00::7", None),
    ("[hooks.internal]:80", None),
    ("fd00::7:zz", None),
    ("hooks.internal/path", None),
]


@pytest.mark.parametrize("entry, allows", ENTRIES)
def test_an_allowed_hosts_entry_names_a_host_and_perhaps_a_port(entry, allows):
    if allows is None:
        with pytest.raises(ValueError):
            outbound.allowed_entry(entry)
        with pytest.raises(ValueError):  # refused at start, not at a request
            Config(WEBHOOK_ALLOWED_HOSTS=[entry])
    else:
        assert outbound.allowed_entry(entry) == allows


def test_an_entry_with_a_port_allows_that_port_only():
    allowed = ["hooks.internal:8443", "[fd00::7]:9000", "open.internal"]
    loopback = resolves_to("10.0.0.7")
    assert outbound.addresses(outbound.parse("http://hooks.internal:8443/x", allowed),
                              allowed, resolve=loopback) == ["10.0.0.7"]
    with pytest.raises(outbound.TargetRefused, match="https://"):
        outbound.parse("http://hooks.internal:8444/x", allowed)
    with pytest.raises(outbound.TargetRefused, match="private"):
        outbound.addresses(outbound.parse("https://hooks.internal/x", allowed), allowed,
                           resolve=loopback)  # 443, not the listed 8443
    outbound.parse("http://[fd00:0::7]:9000/x", allowed)
    with pytest.raises(outbound.TargetRefused):
        outbound.parse("http://[fd00::7]:9001/x", allowed)
    for port in (80, 8080, 65535):  # without a port: every port, as before ports were named
        target = outbound.parse(f"http://open.internal:{port}/x", allowed)
        assert outbound.addresses(target, allowed, resolve=loopback) == ["10.0.0.7"]


def test_port_zero_is_no_port():
    with pytest.raises(outbound.TargetRefused, match="valid host and port"):
        outbound.parse("http://open.internal:0/x", ["open.internal"])
