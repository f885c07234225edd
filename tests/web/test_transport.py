"""Secure cookies over plain HTTP: the sign-in page and a failed form say what is wrong."""

from __future__ import annotations

import pytest

from webapp import create_app

HTTP_ONLY = "This page was opened over plain HTTP"


@pytest.fixture
def secure_app(app, app_config):
    """The suite's database, with the cookies production sets behind HTTPS."""
    return create_app({**app_config, "SESSION_COOKIE_SECURE": True, "TRUSTED_PROXIES": 1})


def _sign_in(client, base: str, **headers: str):
    page = client.get(f"{base}/login", headers=headers)
    return page, client.post(
        f"{base}/login",
        data={"username": "admin", "password": "whatever-it-is", "csrf_token": "missing-cookie"},
        headers=headers,
    )


def test_plain_http_by_host_name_says_https_is_needed(secure_app):
    page, posted = _sign_in(secure_app.test_client(), "http://flowdesk.example.org")
    assert HTTP_ONLY in page.get_data(as_text=True)
    assert "https://flowdesk.example.org/login" in page.get_data(as_text=True)
    assert posted.status_code == 400
    text = posted.get_data(as_text=True)
    assert HTTP_ONLY in text and "The form expired" not in text


@pytest.mark.parametrize(
    ("base", "headers"),
    [
        ("https://flowdesk.example.org", {}),
        ("http://flowdesk.example.org", {"X-Forwarded-Proto": "https"}),
        ("http://localhost:5000", {}),
        ("http://127.0.0.1:8000", {}),
    ],
)
def test_https_and_loopback_get_no_warning(secure_app, base, headers):
    page, posted = _sign_in(secure_app.test_client(), base, **headers)
    assert HTTP_ONLY not in page.get_data(as_text=True)
    assert HTTP_ONLY not in posted.get_data(as_text=True)


def test_without_secure_cookies_plain_http_is_fine(client):
    page = client.get("http://flowdesk.example.org/login")
    assert HTTP_ONLY not in page.get_data(as_text=True)
