"""Security headers on every kind of response; HSTS only behind HTTPS (SESSION_COOKIE_SECURE);
templates and scripts keep to what the Content-Security-Policy allows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.app import login
from tests.helpers.http import basic
from webapp import create_app

ROOT = Path(__file__).resolve().parents[2]

EXPECTED = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
CSP_DIRECTIVES = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def directives(policy: str) -> dict[str, str]:
    pairs = (part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    return {name: value for name, value in pairs}


def assert_protected(response, what: str) -> None:
    for name, value in EXPECTED.items():
        assert response.headers.get(name) == value, f"{what}: {name}"
    policy = directives(response.headers.get("Content-Security-Policy", ""))
    for name, value in CSP_DIRECTIVES.items():
        assert policy.get(name) == value, f"{what}: CSP {name} is {policy.get(name)!r}"
    assert "'unsafe-inline'" not in str(policy) and "'unsafe-eval'" not in str(policy), what
    features = response.headers.get("Permissions-Policy", "")
    for feature in ("camera", "microphone", "geolocation", "payment", "usb"):
        assert f"{feature}=()" in features, f"{what}: Permissions-Policy {feature}"


def responses(app, client) -> dict[str, object]:
    """One response of each kind the app gives, signed in as alice where it needs a user."""

    @app.route("/test-only/boom")
    def boom():
        raise RuntimeError("a bug in a view")

    anonymous = app.test_client()
    found = {
        "redirect to sign-in": anonymous.get("/"),
        "sign-in page": anonymous.get("/login"),
        "static CSS": anonymous.get("/static/css/app.css"),
        "static script": anonymous.get("/static/js/designer.js"),
        "missing static file": anonymous.get("/static/js/missing.js"),
        "404 page": anonymous.get("/no/such/page"),
        "405 page": anonymous.get("/logout"),
        "500 page": anonymous.get("/test-only/boom"),
        "CSRF refusal": anonymous.post("/login", data={"username": "alice"}),
        "API 401": anonymous.get("/api/instances"),
        "API JSON": anonymous.get("/api/instances", headers=basic("alice")),
        "API 404": anonymous.get("/api/instances/999999", headers=basic("alice")),
        "health check": anonymous.get("/healthz"),
    }
    assert login(client, "alice").status_code == 302
    found["page"] = client.get("/inbox/")
    found["htmx fragment"] = client.get("/inbox/count", headers={"HX-Request": "true"})
    found["403 page"] = client.get("/admin/")
    return found


def test_every_kind_of_response_carries_the_security_headers(app_config, demo):
    app = create_app(app_config)
    found = responses(app, app.test_client())
    statuses = {what: response.status_code for what, response in found.items()}
    assert statuses["redirect to sign-in"] == 302
    assert statuses["static CSS"] == 200 and statuses["missing static file"] == 404
    assert statuses["500 page"] == 500 and statuses["API JSON"] == 200
    assert found["API JSON"].is_json and found["API 404"].is_json
    for what, response in found.items():
        assert_protected(response, what)
        assert "Strict-Transport-Security" not in response.headers, what


@pytest.mark.parametrize("secure", [True, False])
def test_hsts_only_when_session_cookies_are_https_only(app_config, demo, secure):
    app = create_app(dict(app_config, SESSION_COOKIE_SECURE=secure))
    # Over plain HTTP the secure cookie would not come back: sign in over https://.
    client = app.test_client()
    client.environ_base["wsgi.url_scheme"] = "https"
    found = responses(app, client)
    for what, response in found.items():
        assert_protected(response, what)
        hsts = response.headers.get("Strict-Transport-Security")
        if secure:
            assert hsts is not None and int(re.search(r"max-age=(\d+)", hsts)[1]) >= 15552000
        else:
            assert hsts is None, what


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
FORBIDDEN_IN_TEMPLATES = {
    "inline script": INLINE_SCRIPT,
    "event handler attribute": re.compile(r"<[^>]*\son[a-z]+\s*=", re.I),
    "javascript: URL": re.compile(r"javascript:", re.I),
    "inline style": re.compile(r"<style|\sstyle\s*=", re.I),
    "htmx code (hx-on)": re.compile(r"hx-on", re.I),
    "htmx js: value": re.compile(r"hx-[a-z-]+(:inherited)?=[\"']\s*js:", re.I),
    "htmx trigger filter": re.compile(r"hx-trigger=[\"'][^\"']*\[", re.I),
}
FORBIDDEN_IN_SCRIPTS = {
    "eval": re.compile(r"\beval\(|new Function\b|set(Timeout|Interval)\(\s*['\"`]"),
    "inline style attribute": re.compile(r"setAttribute\(\s*['\"]style['\"]"),
}


@pytest.mark.parametrize(
    "folder, pattern, rules",
    [
        ("templates", "**/*.html", FORBIDDEN_IN_TEMPLATES),
        ("static/js", "*.js", FORBIDDEN_IN_SCRIPTS),
    ],
)
def test_templates_and_scripts_need_nothing_the_policy_refuses(folder, pattern, rules):
    found = [
        f"{path.relative_to(ROOT)}: {what}: {match.group(0)!r}"
        for path in sorted((ROOT / folder).glob(pattern))
        for what, rule in rules.items()
        for match in rule.finditer(path.read_text())
    ]
    assert found == []
