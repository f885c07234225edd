"""Worker health counts the timers and retries waiting in the database for their time, which
RQ no longer holds."""

from __future__ import annotations

import re

from tests.helpers.documents import chain, node
from tests.helpers.instances import start_many
from tests.helpers.processes import publish_document


def test_health_counts_the_timers_waiting_for_their_time(operator, engine):
    version = publish_document(chain(("wait", node("timerCatch", duration="PT1H"))), key="late")
    start_many(engine, version, 3)
    page = operator.get("/operations/health").get_data(as_text=True)
    waiting = re.search(r"<dt>Waiting for their time</dt><dd>(\d+)", page)
    assert waiting is not None and waiting.group(1) == "3", page
    assert "scheduled</span>" not in page
