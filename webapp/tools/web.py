"""The `http.request` tool: allowed hosts only, no private addresses, pinned to what was checked.

The host is resolved once, every address is checked, and the connection goes to the checked
address (with the original Host header and TLS server name), so DNS cannot swap it afterwards.
"""

from __future__ import annotations

import fnmatch
import http.client
import ipaddress
import json
import socket
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from webapp.engine.tools import ToolCall, ToolError, tool

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
MAX_RESPONSE = 1_000_000
MAX_TIMEOUT = 300.0


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        # _context is the SSL context HTTPSConnection keeps; typeshed does not declare it.
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def host_allowed(host: str, patterns: list[str]) -> bool:
    """Whether `host` matches one of the configured names or wildcard patterns (`*.example.org`)."""
    host = host.lower().rstrip(".")
    return any(fnmatch.fnmatchcase(host, pattern.lower().rstrip(".")) for pattern in patterns)


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


def resolve(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to; ToolError when the name fails or any address is not public.

    Every address the name resolves to is checked, and the caller connects to the one returned,
    so a second lookup (DNS rebinding) never decides where the request goes.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise ToolError("dns", f"Cannot resolve {host}: {error}") from None
    addresses = [str(info[4][0]) for info in infos]
    if not allow_private:
        for address in addresses:
            problem = address_problem(address)
            if problem is not None:
                raise ToolError(
                    "address_not_allowed",
                    f"{host} resolves to {address}: {problem}; set HTTP_ALLOW_PRIVATE to allow it.",
                    retryable=False,
                )
    return addresses[0]


def _request_parts(inputs: Mapping[str, Any], call: ToolCall) -> tuple[str, str, dict, Any, float]:
    method = str(inputs.get("method") or "GET").upper()
    if method not in METHODS:
        raise ToolError(
            "bad_request", f"Method {method} is not one of {', '.join(METHODS)}.", retryable=False
        )
    headers = inputs.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) for k, v in headers.items()
    ):
        raise ToolError("bad_request", "Headers must map names to text.", retryable=False)
    timeout = inputs.get("timeout") or call.timeout
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ToolError("bad_request", "Timeout must be a number of seconds.", retryable=False)
    return method, str(inputs.get("url") or ""), dict(headers), inputs.get("body"), timeout


@tool(
    "http.request",
    inputs={
        "url": "The address to call (its host must be allowed by HTTP_ALLOWED_HOSTS)",
        "method": "GET, POST, PUT, PATCH, DELETE or HEAD (default GET)",
        "headers": "Request headers, a mapping of names to text",
        "body": "A JSON value sent as the request body",
        "timeout": "Seconds to wait for the answer (default: the node's timeout)",
    },
    optional=("method", "headers", "body", "timeout"),
    description="Calls an HTTP API and returns {status, headers, json or text}.",
)
def http_request(inputs: Mapping[str, Any], call: ToolCall) -> dict[str, Any]:
    method, url, headers, body, timeout = _request_parts(inputs, call)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolError(
            "bad_url", f"{url!r} is not an http:// or https:// address.", retryable=False
        )
    host = parts.hostname
    if not host_allowed(host, list(call.config.get("HTTP_ALLOWED_HOSTS") or [])):
        raise ToolError(
            "host_not_allowed",
            f"Calls to {host} are not allowed; add it to HTTP_ALLOWED_HOSTS.",
            retryable=False,
        )
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = resolve(host, port, bool(call.config.get("HTTP_ALLOW_PRIVATE")))
    connection_class = _PinnedHTTPS if parts.scheme == "https" else _PinnedHTTP
    connection = connection_class(host, port, address, min(float(timeout), MAX_TIMEOUT))
    payload = None
    if body is not None:
        payload = json.dumps(body).encode("utf-8")
        headers.setdefault("Content-Type", "application/json")
    headers.setdefault("Idempotency-Key", call.idempotency_key)
    headers.setdefault("Accept", "application/json, text/plain;q=0.9, */*;q=0.5")
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    try:
        connection.request(
            method, target, body=payload, headers={k: str(v) for k, v in headers.items()}
        )
        response = connection.getresponse()
        data = response.read(MAX_RESPONSE + 1)
    except TimeoutError:
        raise ToolError("timeout", f"{host} did not answer within {timeout:g} seconds.") from None
    except (OSError, http.client.HTTPException) as error:
        raise ToolError("connection_failed", f"Calling {host} failed: {error}") from None
    finally:
        connection.close()
    if len(data) > MAX_RESPONSE:
        raise ToolError(
            "response_too_large", f"The answer is over {MAX_RESPONSE:,} bytes.", retryable=False
        )
    result = _result(response, data)
    if not 200 <= response.status < 300:
        raise ToolError(
            f"http_{response.status}",
            f"{method} {host}{parts.path or '/'} answered {response.status} {response.reason}.",
            retryable=response.status >= 500 or response.status in (408, 429),
        )
    return result


def _result(response: http.client.HTTPResponse, data: bytes) -> dict[str, Any]:
    result: dict[str, Any] = {
        "status": response.status,
        "headers": {name.lower(): value for name, value in response.getheaders()},
    }
    content_type = response.getheader("Content-Type") or ""
    charset = response.headers.get_content_charset() or "utf-8"
    text = data.decode(charset, "replace")
    if "json" in content_type:
        try:
            result["json"] = json.loads(text) if text.strip() else None
            return result
        except ValueError:
            pass
    result["text"] = text
    return result
