"""Operations test helpers: processes that wait, fail or fail once, started through the engine."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.engine.conftest import (  # noqa: F401 - fixtures shared with the engine tests
    engine,
    redis_client,
    test_tools,
    workers,
)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.fixture
def operator(login_as):
    return login_as("operator")
