"""The `http.request` tool: allowed hosts only, no private addresses, pinned to what was checked.

The host is resolved once, every address is checked, and the connection goes to the checked
address (with the original Host header and TLS server name), so DNS cannot swap it afterwards.
"""

from __future__ import annotations

import fnmatch
import http.client
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from webapp.engine.tools import ToolCall, ToolError, tool
from webapp.infra.addresses import (  # noqa: F401  (address_problem, public_address: the tool's API)
    AddressRefused,
    PinnedHTTP,
    PinnedHTTPS,
    address_problem,
    checked_address,
    public_address,
)

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
MAX_RESPONSE = 1_000_000
MAX_TIMEOUT = 300.0


def host_allowed(host: str, patterns: list[str]) -> bool:
    """Whether `host` matches one of the configured names or wildcard patterns (`*.example.org`)."""
    host = host.lower().rstrip(".")
    return any(fnmatch.fnmatchcase(host, pattern.lower().rstrip(".")) for pattern in patterns)


def resolve(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to; ToolError when the name fails or any address is not public.

    Every address the name resolves to is checked, and the caller connects to the one returned,
    so a second lookup (DNS rebinding) never decides where the request goes.
    """
    try:
        return checked_address(host, port, allow_private)
    except AddressRefused as refused:
        if refused.code == "dns":
            raise ToolError("dns", refused.message) from None
        raise ToolError(
            refused.code,
            f"{refused.message}; set HTTP_ALLOW_PRIVATE to allow it.",
            retryable=False,
        ) from None


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
    connection_class = PinnedHTTPS if parts.scheme == "https" else PinnedHTTP
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
