"""Incident messages name a node as people see it: by its title, else by its kind and place,
while the instance's error keeps the node id for operators and the API."""

from __future__ import annotations

import pytest

from tests.helpers.documents import chain, node
from tests.helpers.instances import load, start
from tests.helpers.processes import publish_document, publish_without_validation
from tests.helpers.workers import drain
from webapp.engine import limits

CLERK = {"type": "role", "value": "clerk"}


def failed(engine, version, **kwargs) -> dict:
    instance = load(engine, start(engine, version, **kwargs))
    assert instance.status == "failed"
    return instance.error


@pytest.mark.parametrize(
    ("title", "named"), [("", "the untitled user task"), ("Review offers", "'Review offers'")]
)
def test_a_failed_multi_instance_names_its_activity(engine, demo, title, named):
    review = node("userTask", title, assignee=CLERK, multiInstance={"collection": "$input.items"})
    version = publish_document(chain(("review", review)))
    error = failed(engine, version, input={"items": "abc"})
    assert error["node"] == "review"
    assert error["message"].startswith(f"The multi-instance of {named} failed: ")


@pytest.mark.parametrize(
    ("title", "named"), [("", "the untitled service task"), ("Charge card", "'Charge card'")]
)
def test_a_tool_not_installed_names_its_task_and_a_tool_s_own_message_is_kept(engine, title, named):
    missing = node("serviceTask", title, tool="gone.tool")
    version = publish_without_validation(chain(("pay", missing)), f"gone{len(title)}")
    error = failed(engine, version)
    assert error["node"] == "pay"
    assert error["message"] == f"The tool 'gone.tool' of {named} is not installed."

    pay = node("serviceTask", title, tool="fail", inputs={"message": "'card declined'"}, retries=0)
    instance_id = start(engine, publish_document(chain(("pay", pay)), key="pay"))
    drain(engine)
    error = load(engine, instance_id).error
    assert (error["node"], error["message"]) == ("pay", "card declined"), "as the tool said it"


@pytest.mark.parametrize(
    ("title", "named"), [("", "the untitled timer"), ("Cool-off", "'Cool-off'")]
)
def test_a_bad_timer_names_its_event(engine, title, named):
    version = publish_document(chain(("wait", node("timerCatch", title, date="$input.when"))))
    error = failed(engine, version, input={"when": "next tuesday"})
    assert error["node"] == "wait"
    assert error["message"].startswith(f"The timer of {named} is invalid: ")
    assert "wait" not in error["message"].replace("next tuesday", "")


@pytest.mark.parametrize(
    ("title", "named"),
    [("", "The untitled call activity"), ("Order parts", "Call activity 'Order parts'")],
)
def test_a_call_too_deep_names_the_call_activity(engine, monkeypatch, title, named):
    monkeypatch.setattr(limits, "CALL_DEPTH", 0)
    publish_document(chain(("t", node("manualTask", "Note"))), key="child")
    version = publish_document(chain(("call", node("callActivity", title, process="child"))))
    error = failed(engine, version)
    assert (error["node"], error["code"]) == ("call", "call_depth")
    assert error["message"] == (
        f"{named} cannot call its process: the call chain is deeper than 0 instances."
    )


def test_an_untitled_node_next_to_a_titled_one_is_named_by_its_place(engine):
    doc = chain(
        ("check", node("scriptTask", "Check stock", script="y = 1")),
        ("calc", node("scriptTask", script="x = $input.a / $input.b")),
    )
    version = publish_document(doc)
    error = failed(engine, version, input={"a": 1, "b": 0})
    assert error["node"] == "calc"
    assert error["message"].startswith("The script of the script task after 'Check stock' failed")
