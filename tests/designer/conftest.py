"""Designer test helpers: processes made through the service, signed-in clients, canvas saves."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.helpers.documents import approval_document
from webapp.models import Partition, User
from webapp.services import processes


@pytest.fixture
def make_process(db_session, demo):
    """Create a process (finance partition unless told) through the service; returns its id."""

    def make(
        key: str = "invoice", partition: str | None = "finance", doc: dict | None = None
    ) -> int:
        part = db_session.scalar(select(Partition).where(Partition.key == partition))
        actor = db_session.scalar(select(User).where(User.username == "designer"))
        process = processes.create_process(
            key, key.title(), partition_id=part.id if part else None, actor=actor, document=doc
        )
        db_session.commit()
        return process.id

    return make


@pytest.fixture
def pid(make_process):
    """A draft of the approval document in finance; its process id."""
    return make_process(doc=approval_document())


@pytest.fixture
def designer(login_as):
    return login_as("designer")
