"""Test scenarios over a process with a business rule task: the scratch database gets the
decision versions the task would evaluate (in the process's partition), so a scenario checks
the decision's result, and a decision not published fails the scenario as it would fail live."""

from __future__ import annotations

from sqlalchemy import func, select

from tests.helpers.app import csrf_token
from tests.helpers.decision_tasks import publish_decision, table_dmn
from tests.helpers.documents import chain, node
from webapp.models import DecisionVersion, Process
from webapp.services import scenarios

RULES = [("&lt; 100", "0"), ("100 &lt;= ? &lt; 1000", "0.1"), ("&gt;= 1000", "0.2")]
SCENARIO = {
    "name": "A medium order gets ten percent",
    "input": {"amount": 500},
    "actions": [],
    "expect": {"status": "completed", "values": {"$vars.discount": 0.1}},
}


def _doc(**config) -> dict:
    return chain(
        ("calc", node("scriptTask", script="amount = $input.amount")),
        ("rule", node("businessRuleTask", decision="discount", saveTo="discount", **config)),
    )


def test_a_scenario_evaluates_the_published_decision_of_the_partition(make_process, db_session):
    process = db_session.get(Process, make_process("priced", doc=_doc()))
    body = scenarios.checked(process, SCENARIO).as_dict()

    missing = scenarios.run_body(_doc(), body, partition_id=process.partition_id)
    assert not missing.passed
    assert "decision 'discount'" in missing.failure.reason

    publish_decision(table_dmn("discount", RULES), "hr-pricing", partition="hr")
    elsewhere = scenarios.run_body(_doc(), body, partition_id=process.partition_id)
    assert not elsewhere.passed, "another partition's decision is not the process's"

    publish_decision(table_dmn("discount", RULES), "pricing", partition="finance")
    result = scenarios.run_body(_doc(), body, partition_id=process.partition_id)
    assert result.passed, result.failure
    assert result.variables["discount"] == 0.1

    publish_decision(table_dmn("discount", [("-", "0.5")]), "pricing", partition="finance")
    latest = scenarios.run_body(_doc(), body, partition_id=process.partition_id)
    assert not latest.passed and latest.variables["discount"] == 0.5
    pinned = scenarios.run_body(
        _doc(binding="version", version=1), body, partition_id=process.partition_id
    )
    assert pinned.passed, pinned.failure
    assert db_session.scalar(select(func.count()).select_from(DecisionVersion)) == 3


def test_play_evaluates_the_published_decision(designer, make_process, db_session):
    doc = chain(("rule", node("businessRuleTask", decision="flat", saveTo="discount")))
    pid = make_process("flat-priced", doc=doc)
    publish_decision(table_dmn("flat", [("-", "0.5")]), "flat-pricing", partition="finance")
    path = f"/designer/{pid}/play"
    body = {"csrf_token": csrf_token(designer, path), "played": "", "op": "start"}
    page = designer.post(path, data=body).get_data(as_text=True)
    assert "<dt>discount</dt><dd><code>0.5</code></dd>" in page
    assert "<li>decision_evaluated <code>rule</code></li>" in page
    assert "<li>completed</li>" in page
