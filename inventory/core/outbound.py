"""Where the service may send requests of its own (webhooks): an SSRF guard.

A target is an `https://` URL whose host is, and resolves to, globally
routable addresses only (`ipaddress`' `is_global`, and not multicast): an
IPv6 address that carries an IPv4 one (IPv4-mapped, 6to4, NAT64's
64:ff9b::/96, Teredo) passes only if the IPv4 address does too. A host
(and port) listed in WEBHOOK_ALLOWED_HOSTS is exempt, and may be `http://`.
The addresses checked are the ones connected to: a name is resolved once per
delivery and the connection goes to the vetted address, so a name that
resolves elsewhere between the check and the connection (DNS rebinding)
gains nothing.

An entry of WEBHOOK_ALLOWED_HOSTS is `host`, `host:port`, an IP literal,
`[v6]` or `[v6]:port`: with a port it allows that port only; without one,
every port (an entry written before ports could be named keeps its meaning).
"""
import functools
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit


class TargetRefused(ValueError):
    """A URL the service will not send to; the message says why."""


class NotResolved(TargetRefused):
    """The host has no address (yet): not refused at create, retried at delivery."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as in the URL (for Host and TLS' server name)
    port: int
    path: str  # with its query


def parse(url, allowed_hosts=()):
    """The Target of `url`, or TargetRefused for what no address can make right."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # brackets that close no IPv6 address, a port out of range
        port = parts = None
    if parts is None or port == 0:
        # (0 names no port: it is not the scheme's default)
        raise TargetRefused("Must be a URL with a valid host and port.")
    host = _host_key(parts.hostname or "")
    port = port or (443 if parts.scheme == "https" else 80)
    allowed = allows(allowed_hosts, host, port)
    if parts.scheme != "https" and not (allowed and parts.scheme == "http"):
        raise TargetRefused("Must be an https:// URL; http:// only to a host (and port) that "
                            "the deployment's WEBHOOK_ALLOWED_HOSTS lists.")
    if not host:
        raise TargetRefused("Must name a host.")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused("Must not carry credentials in the URL.")
    if parts.fragment or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise TargetRefused("Must not have a fragment, spaces or control characters.")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, host, port, path)


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")  # carrier-grade NAT (RFC 6598)
# IANA's IETF protocol assignments, not globally reachable but for two
# anycast services: Python before 3.12.4 counts only 192.0.0.0/29 of them
_PROTOCOL_ASSIGNMENTS = ipaddress.IPv4Network("192.0.0.0/24")
_GLOBAL_ASSIGNMENTS = frozenset(map(ipaddress.IPv4Address, ("192.0.0.9", "192.0.0.10")))


def _embedded(ip):
    """(form, the IPv4 address) an IPv6 address carries, or None: packets
    to it reach that IPv4 address."""
    if ip.version == 4:
        return None
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", ip.ipv4_mapped
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    if ip in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.teredo is not None:
        return "Teredo", ip.teredo[1]  # (server, client): packets go to the client
    return None


def _not_global(ip):
    """What makes `ip` not globally routable, or None."""
    for flag, what in (("is_loopback", "a loopback"), ("is_link_local", "a link-local"),
                       ("is_unspecified", "an unspecified"), ("is_multicast", "a multicast"),
                       ("is_private", "a private"), ("is_site_local", "a site-local"),
                       ("is_reserved", "a reserved")):
        if getattr(ip, flag, False):
            return f"{what} address"
    if ip.version == 4 and ip in _SHARED:
        return "a carrier-grade NAT (shared) address"
    if not ip.is_global or (ip.version == 4 and ip in _PROTOCOL_ASSIGNMENTS
                            and ip not in _GLOBAL_ASSIGNMENTS):
        return "a special-purpose address"
    return None


def refused_address(address):
    """Why a delivery may not go to `address`, or None: an address passes
    when it is globally routable, and so is any IPv4 address it carries."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    embedded = _embedded(ip)
    if embedded is not None:
        form, inner = embedded
        reason = _not_global(inner)
        if reason is not None:
            return f"{reason} ({inner}, in the {form} address {ip})"
        if form in ("IPv4-mapped", "NAT64"):
            return None  # the IPv4 address decides: the prefix is a translator's, not a host's
    reason = _not_global(ip)
    return None if reason is None else f"{reason} ({ip})"


def _host_key(host):
    """A host as compared with WEBHOOK_ALLOWED_HOSTS: lower case, an IP
    literal in its compressed form (`::0001` is `::1`)."""
    host = host.lower()
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


@functools.lru_cache(maxsize=16)
def _allowed(entries):
    """{host: ports (None: every port)} of WEBHOOK_ALLOWED_HOSTS' entries."""
    allowed = {}
    for entry in entries:
        host, port = allowed_entry(entry)
        ports = allowed.setdefault(host, set())
        if ports is not None:
            allowed[host] = None if port is None else ports | {port}
    return allowed


def allowed_entry(entry):
    """(host, port or None) of one WEBHOOK_ALLOWED_HOSTS entry; ValueError
    for one that is neither `host`, `host:port`, an IP literal, `[v6]` nor
    `[v6]:port`."""
    text = entry.strip()
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"{entry!r}: an IPv6 entry is [address] or [address]:port.")
        port_text = rest[1:] if rest else None
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError(f"{entry!r}: not an IPv6 address in brackets.") from None
    elif text.count(":") > 1:  # a bare IPv6 literal: no port can follow it unbracketed
        host, port_text = text, None
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError(f"{entry!r}: an IPv6 entry with a port is [address]:port.") \
                from None
    else:
        host, _, port_text = text.partition(":") if ":" in text else (text, "", None)
    if not host or any(ch in host for ch in "/?#@ ") or ("[" in host or "]" in host) \
            and not text.startswith("["):
        raise ValueError(f"{entry!r}: not a host name or IP literal.")
    port = None
    if port_text is not None:
        if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"{entry!r}: the port must be a number from 1 to 65535.")
        port = int(port_text)
    return _host_key(host), port


def allows(allowed_hosts, host, port):
    """Whether WEBHOOK_ALLOWED_HOSTS (its entries) exempts `host` at `port`."""
    ports = _allowed(tuple(allowed_hosts)).get(_host_key(host), set())
    return ports is None or port in ports


def addresses(target, allowed_hosts=(), resolve=socket.getaddrinfo):
    """The addresses a request to `target` may connect to: every address
    the host resolves to, each checked; TargetRefused if any is forbidden
    (a name with one private address among public ones is refused whole),
    NotResolved if it has none."""
    try:
        infos = resolve(target.host, target.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise NotResolved(f"{target.host} does not resolve ({error}).") from None
    found = list(dict.fromkeys(info[4][0] for info in infos))
    if not found:
        raise NotResolved(f"{target.host} does not resolve.")
    if not allows(allowed_hosts, target.host, target.port):
        for address in found:
            reason = refused_address(address)
            if reason is not None:
                raise TargetRefused(f"{target.host} is or resolves to {reason}; webhooks go "
                                    "to public addresses only (WEBHOOK_ALLOWED_HOSTS lists "
                                    "exceptions).")
    return found


def check(url, allowed_hosts=(), resolve=socket.getaddrinfo):
    """Whether `url` may be a webhook's target now: TargetRefused if not; a
    name that does not resolve yet is accepted (its deliveries fail and are
    retried until it does)."""
    target = parse(url, allowed_hosts)
    try:
        addresses(target, allowed_hosts, resolve)
    except NotResolved:
        pass
    return target
