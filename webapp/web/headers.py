"""Security headers on every response: pages, API JSON, static files, redirects and error pages.

The Content-Security-Policy allows no inline script, no eval and no inline style: every script and
style sheet is a static file, and htmx attributes never carry JavaScript (no hx-on, js: values or
trigger filters). bpmn-js styles its SVG through the CSSOM, which the policy allows.
"""

from __future__ import annotations

from flask import Flask, Response, current_app

# bpmn-js's CSS carries its icons and font as data: URIs.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "accelerometer",
        "camera",
        "display-capture",
        "geolocation",
        "gyroscope",
        "hid",
        "magnetometer",
        "microphone",
        "payment",
        "serial",
        "usb",
    )
)

HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Permissions-Policy": PERMISSIONS_POLICY,
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

# One year; only sent behind HTTPS (SESSION_COOKIE_SECURE), so plain-HTTP set-ups keep working.
STRICT_TRANSPORT_SECURITY = "max-age=31536000"


def add_security_headers(response: Response) -> Response:
    """Set the security headers on `response`; HSTS only when cookies are HTTPS-only."""
    response.headers.update(HEADERS)
    if current_app.config.get("SESSION_COOKIE_SECURE"):
        response.headers["Strict-Transport-Security"] = STRICT_TRANSPORT_SECURITY
    return response


def register(app: Flask) -> None:
    app.after_request(add_security_headers)
