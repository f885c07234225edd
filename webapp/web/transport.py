"""Secure cookies reached over plain HTTP: the browser drops them, so every form would fail as
"expired". Detect that and say what is wrong instead."""

from __future__ import annotations

import ipaddress

from flask import Flask, current_app, request


def _loopback(host: str) -> bool:
    """Browsers accept Secure cookies from http://localhost and loopback addresses."""
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    name = name.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def insecure_transport() -> str | None:
    """What is wrong when SESSION_COOKIE_SECURE is on but this request came over plain HTTP."""
    if not current_app.config.get("SESSION_COOKIE_SECURE") or request.is_secure:
        return None
    if _loopback(request.host):
        return None
    secure_url = "https://" + request.host + request.full_path.rstrip("?")
    return (
        "This page was opened over plain HTTP, but Flowdesk sends its sign-in cookie only over "
        "HTTPS (SESSION_COOKIE_SECURE is on), so your browser cannot stay signed in here. Open "
        f"{secure_url} instead. Behind a TLS proxy, set TRUSTED_PROXIES so Flowdesk sees the "
        "original https request (X-Forwarded-Proto)."
    )


def register(app: Flask) -> None:
    @app.context_processor
    def inject_insecure_transport() -> dict[str, str | None]:
        return {"insecure_transport": insecure_transport()}
