"""Outgoing connections that cannot be steered at private networks (SSRF): every address a
host resolves to is checked, and the connection goes to the checked address (with the original
Host header and TLS server name), so DNS cannot swap it afterwards. Used by the `http.request`
tool and by webhook deliveries."""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl


class PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        # _context is the SSL context HTTPSConnection keeps; typeshed does not declare it.
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


# IPv6 ranges that carry an IPv4 address in their last 32 bits: the IPv4 host is the target.
_IPV4_IN_LAST_32 = [
    ipaddress.IPv6Network("::ffff:0:0/96"),  # IPv4-mapped
    ipaddress.IPv6Network("::ffff:0:0:0/96"),  # IPv4-translated (SIIT)
    ipaddress.IPv6Network("::/96"),  # IPv4-compatible (deprecated)
    ipaddress.IPv6Network("64:ff9b::/96"),  # NAT64, well-known prefix
]
# Local-use NAT64 (RFC 8215): the IPv4 part sits where the operator chose; never public.
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _not_public(ip: IPAddress) -> bool:
    return (
        not ip.is_global
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or ip.is_link_local
        or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local)
    )


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses a translation or tunnel address reaches, None for a plain IPv6 one."""
    if any(ip in network for network in _IPV4_IN_LAST_32):
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)  # (server, client), the client already un-inverted
    return None


def address_problem(address: str) -> str | None:
    """Why `address` is not a public one to call (None when it is)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    if ip.is_loopback or ip.is_unspecified:
        return "a loopback or unspecified address"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _LOCAL_NAT64:
            return "a local-use NAT64 address"
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            inner = next((v4 for v4 in embedded if _not_public(v4)), None)
            if inner is not None:
                return f"it embeds the IPv4 address {inner}, which is not public"
            # Mapped, compatible and NAT64 forms stand for the IPv4 host itself.
            if any(ip in network for network in _IPV4_IN_LAST_32):
                return None
    if _not_public(ip):
        return "a private, loopback, link-local, reserved or multicast address"
    return None


def public_address(address: str) -> bool:
    return address_problem(address) is None


class AddressRefused(Exception):
    """The host did not resolve, or resolved to an address that is not public."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def checked_address(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to; AddressRefused (`dns` or `address_not_allowed`) when the name
    fails or any of its addresses is not public (unless `allow_private`)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise AddressRefused("dns", f"Cannot resolve {host}: {error}") from None
    addresses = [str(info[4][0]) for info in infos]
    if not allow_private:
        for address in addresses:
            problem = address_problem(address)
            if problem is not None:
                raise AddressRefused(
                    "address_not_allowed", f"{host} resolves to {address}: {problem}"
                )
    return addresses[0]
