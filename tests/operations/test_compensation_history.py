"""The instance page tells what a compensation throw and a cancel end did, in words."""

from __future__ import annotations

from tests.helpers.compensation import saga
from tests.helpers.instances import load, start
from tests.helpers.pages import text_of
from tests.helpers.processes import publish_document


def test_the_history_says_how_many_handlers_a_throw_ran_and_when_none_were_left(
    operator, engine, demo
):
    instance_id = start(engine, publish_document(saga(throws=2), key="saga"), input={"price": 3})
    assert load(engine, instance_id).status == "completed"
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    history = text_of(page[page.index('id="history"') :])
    assert "compensation thrown Undo 2 handlers to run, newest completion first" in history
    assert "compensation thrown Undo nothing completed is left to compensate" in history
