"""Flowdesk behind a TLS proxy, in process: what a Host header without its port does to a form
post, the cookies the sign-in page sends, and which front-end files pages need."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

import pytest

from tests.helpers.app import make_user
from webapp import create_app
from webapp.web.assets import TEST_VENDOR_FILES, VENDOR_FILES, served_path

BASE = "https://flowdesk.example.org:8443"


@pytest.fixture
def secure_app(app, app_config):
    """The suite's database, with production's settings behind one HTTPS proxy."""
    return create_app({**app_config, "SESSION_COOKIE_SECURE": True, "TRUSTED_PROXIES": 1})


def _token(page: str) -> str:
    return re.search(r'name="csrf_token"[^>]*?value="([^"]+)"', page).group(1)


def _post_sign_in(client, host: str, username: str, password: str):
    page = client.get(f"{BASE}/login").get_data(as_text=True)
    return client.post(
        "/login",
        base_url=f"https://{host}",
        data={"csrf_token": _token(page), "username": username, "password": password},
        headers={"Referer": f"{BASE}/login"},
    )


def test_a_host_header_that_lost_its_port_is_named_as_the_cause(secure_app, db_session, caplog):
    make_user("proxied", ["tasks.work"], password="proxied-password-1")
    db_session.commit()
    client = secure_app.test_client()
    with caplog.at_level(logging.WARNING):
        refused = _post_sign_in(client, "flowdesk.example.org", "proxied", "proxied-password-1")
    assert refused.status_code == 400
    text = refused.get_data(as_text=True)
    assert "does not match this server" in text and "The form expired" not in text
    lines = [r.getMessage() for r in caplog.records if "form refused" in r.getMessage()]
    assert len(lines) == 1 and "origin/referrer mismatch" in lines[0], lines
    assert "'flowdesk.example.org'" in lines[0] and f"'{BASE}/login'" in lines[0]

    signed_in = _post_sign_in(client, "flowdesk.example.org:8443", "proxied", "proxied-password-1")
    assert signed_in.status_code == 302, signed_in.get_data(as_text=True)


def test_an_expired_token_is_still_called_expired(secure_app, caplog):
    client = secure_app.test_client()
    client.get(f"{BASE}/login")
    with caplog.at_level(logging.WARNING):
        refused = client.post(
            f"{BASE}/login",
            data={"csrf_token": "not-the-token", "username": "a", "password": "b"},
            headers={"Referer": f"{BASE}/login"},
        )
    assert refused.status_code == 400
    assert "The form expired" in refused.get_data(as_text=True)
    assert any("security token" in r.getMessage() for r in caplog.records)


def test_every_cookie_the_sign_in_page_sets_or_removes_is_secure(secure_app, db_session):
    make_user("leaving", ["tasks.work"], password="leaving-password-1")
    db_session.commit()
    client = secure_app.test_client()
    answers = [client.get(f"{BASE}/login")]
    form = {"username": "leaving", "password": "leaving-password-1", "remember": "y"}
    answers.append(
        client.post(
            f"{BASE}/login",
            data={"csrf_token": _token(answers[-1].get_data(as_text=True)), **form},
            headers={"Referer": f"{BASE}/login"},
        )
    )
    answers.append(client.get(f"{BASE}/account"))
    answers.append(
        client.post(
            f"{BASE}/logout",
            data={"csrf_token": _token(answers[-1].get_data(as_text=True))},
            headers={"Referer": f"{BASE}/account"},
        )
    )
    answers.append(client.get(f"{BASE}/login"))
    cookies = [cookie for answer in answers for cookie in answer.headers.getlist("Set-Cookie")]
    assert any(c.startswith("remember_token=;") for c in cookies), cookies  # a removal
    for cookie in cookies:
        attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")}
        assert {"secure", "httponly", "samesite"} <= attributes, cookie


def test_pages_need_no_test_only_front_end_file(secure_app, tmp_path):
    static = tmp_path / "static"
    for package, names in VENDOR_FILES.items():
        for name in names:
            target = static / served_path(package, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(
                Path(secure_app.root_path).parent / "static" / served_path(package, name), target
            )
    assert not any((static / "vendor" / package).exists() for package in TEST_VENDOR_FILES)
    secure_app.static_folder = str(static)
    page = secure_app.test_client().get(f"{BASE}/login").get_data(as_text=True)
    assert "missing-assets" not in page
