"""API test fixtures: published processes and HTTP Basic clients for the demo users."""

from __future__ import annotations

import pytest

from tests.engine.conftest import engine, published  # noqa: F401 - shared fixtures
from tests.helpers.http import basic


@pytest.fixture
def api(client, request):
    """Call the API as a user: api("alice").post("/api/instances", json=...)."""
    request.getfixturevalue("published")

    class Caller:
        def __init__(self, username: str) -> None:
            self.headers = basic(username)

        def __getattr__(self, method: str):
            def call(path: str, **kwargs):
                headers = {**self.headers, **kwargs.pop("headers", {})}
                return getattr(client, method)(path, headers=headers, **kwargs)

            return call

    return Caller
