"""Where the service may send requests of its own (webhooks): an SSRF guard.

A target is an `https://` URL whose host is not, and does not resolve to, a
loopback, private, link-local, unspecified, multicast or reserved address,
unless the host is listed as allowed (then `http://` is allowed too). The
addresses checked are the ones connected to: a name is resolved once per
delivery and the connection goes to the vetted address, so a name that
resolves elsewhere between the check and the connection (DNS rebinding)
gains nothing.
"""
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
    except ValueError:
        raise TargetRefused("Must be a URL with a valid host and port.") from None
    host = (parts.hostname or "").lower()
    allowed = host in allowed_hosts
    if parts.scheme != "https" and not (allowed and parts.scheme == "http"):
        raise TargetRefused("Must be an https:// URL.")
    if not host:
        raise TargetRefused("Must name a host.")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused("Must not carry credentials in the URL.")
    if parts.fragment or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise TargetRefused("Must not have a fragment, spaces or control characters.")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, host, port or (443 if parts.scheme == "https" else 80), path)


def refused_address(address):
    """Why a delivery may not go to `address`, or None."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for flag, what in (("is_loopback", "a loopback"), ("is_link_local", "a link-local"),
                       ("is_unspecified", "an unspecified"), ("is_multicast", "a multicast"),
                       ("is_private", "a private"), ("is_reserved", "a reserved")):
        if getattr(ip, flag):
            return f"{what} address ({ip})"
    return None


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
    if target.host not in allowed_hosts:
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
