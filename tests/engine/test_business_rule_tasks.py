"""Business rule tasks: the decision is evaluated inside the step, its result feeds later
nodes, and every failure (conflicting rules, a missing decision, no match where one is required)
is an incident naming decision, version and rules that a retry evaluates afresh."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from tests.helpers.decision_tasks import publish_decision, table_dmn
from tests.helpers.documents import chain, document, flow, node, wire
from tests.helpers.instances import entered, load, start
from tests.helpers.processes import publish_document, publish_without_validation
from tests.helpers.workers import wait_for
from webapp.engine import steps
from webapp.models import HistoryEntry, Job
from webapp.services.jobs import commit
from webapp.services.processes import ProcessError

DISCOUNTS = [("&lt; 100", "0"), ("[100..1000)", "0.1"), ("&gt;= 1000", "0.2")]
# Rules whose overlap depends on the data (publishing cannot see it): both match when limit > 50.
OVERLAPPING = [("&lt; limit", "0"), ("&gt;= 50", "0.1")]


def _evaluations(session, instance_id: int) -> list[dict]:
    session.rollback()
    return list(
        session.scalars(
            select(HistoryEntry.details)
            .where(
                HistoryEntry.instance_id == instance_id,
                HistoryEntry.kind == "decision_evaluated",
            )
            .order_by(HistoryEntry.id)
        )
    )


def _routed(**rule_config) -> dict:
    """amount from the start input -> the discount decision -> a gateway on its result."""
    nodes = {
        "start": node("startEvent"),
        "calc": node("scriptTask", script="amount = $input.amount"),
        "rule": node("businessRuleTask", "Work out the discount", **rule_config),
        "route": node("exclusiveGateway"),
        "discounted": node("endEvent"),
        "full": node("endEvent"),
    }
    flows = {
        **wire("start", "calc", "rule", "route"),
        "yes": flow("route", "discounted", "$vars.discount > 0"),
        "no": flow("route", "full", default=True),
    }
    return document(nodes, flows)


def test_the_decision_is_evaluated_in_the_step_and_its_result_routes_the_gateway(engine, demo):
    publish_decision(table_dmn("discount", DISCOUNTS), "pricing")
    version = publish_document(_routed(decision="discount", saveTo="discount"))
    instance_id = start(engine, version, input={"amount": 500})
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["discount"] == 0.1
    assert instance.nodes["rule"] == 0.1
    assert "discounted" in entered(engine, instance_id)
    jobs = select(func.count()).select_from(Job).where(Job.instance_id == instance_id)
    assert engine.scalar(jobs) == 0  # no worker round trip
    [evaluation] = _evaluations(engine, instance_id)
    assert evaluation["decisionId"] == "discount"
    assert (evaluation["version"], evaluation["matched"], evaluation["result"]) == (1, [2], 0.1)
    assert evaluation["inputs"][0]["value"] == 500
    assert evaluation["outputs"] == [{"discount": 0.1}]

    small = load(engine, start(engine, version, input={"amount": 20}))
    assert small.vars["discount"] == 0 and small.status == "completed"


def test_a_pinned_version_is_evaluated_even_after_a_newer_one(engine, demo):
    publish_decision(table_dmn("discount", DISCOUNTS), "pricing")
    publish_decision(table_dmn("discount", [("-", "0.5")]), "pricing")
    pinned = publish_document(
        _routed(decision="discount", binding="version", version=1, saveTo="discount"), key="old"
    )
    latest = publish_document(_routed(decision="discount", saveTo="discount"), key="new")
    assert load(engine, start(engine, pinned, input={"amount": 500})).vars["discount"] == 0.1
    assert load(engine, start(engine, latest, input={"amount": 500})).vars["discount"] == 0.5


def _looked_up(**config) -> dict:
    return chain(
        ("calc", node("scriptTask", script="amount = $input.amount")),
        ("rule", node("businessRuleTask", decision="discount", saveTo="discount", **config)),
    )


def test_no_match_where_a_match_is_required_is_an_incident(engine, demo):
    publish_decision(table_dmn("discount", [("&gt; 1000", "0.2")]), "pricing")
    optional = publish_document(_looked_up(), key="optional")
    required = publish_document(_looked_up(required=True), key="required")
    done = load(engine, start(engine, optional, input={"amount": 5}))
    assert done.status == "completed" and done.vars["discount"] is None
    instance = load(engine, start(engine, required, input={"amount": 5}))
    assert instance.status == "failed"
    assert instance.error["code"] == "decision_no_match"
    assert "'discount' (version 1)" in instance.error["message"]
    assert instance.error["node"] == "rule"


def test_a_missing_decision_is_an_incident_and_retry_uses_the_decision_published_since(
    engine, demo
):
    version = publish_without_validation(_routed(decision="discount", saveTo="discount"), "early")
    instance_id = start(engine, version, input={"amount": 500})
    error = load(engine, instance_id).error
    assert error["code"] == "decision_missing"
    assert "decision 'discount'" in error["message"] and error["node"] == "rule"

    publish_decision(table_dmn("discount", DISCOUNTS), "pricing")
    commit(steps.retry_instance(engine, instance_id))
    instance = load(engine, instance_id)
    assert (instance.status, instance.vars["discount"]) == ("completed", 0.1)


def test_conflicting_rules_are_an_incident_and_retry_after_a_fix_completes_with_real_workers(
    engine, demo, workers, test_tools
):
    publish_decision(table_dmn("discount", OVERLAPPING), "pricing")
    doc = chain(
        ("fetch", node("serviceTask", tool="test.record", inputs={"name": "'before'"})),
        ("rule", node("businessRuleTask", decision="discount", saveTo="discount")),
        ("after", node("serviceTask", tool="test.record", inputs={"name": "'after'"})),
    )
    doc["nodes"]["fetch"]["config"]["saveTo"] = "fetched"
    doc["variables"] = "pool"
    version = publish_document(doc)
    instance_id = start(engine, version, input={"amount": 70, "limit": 100})
    workers.start(1)
    wait_for(lambda: load(engine, instance_id).status == "failed", what="the incident")
    error = load(engine, instance_id).error
    assert error["code"] == "decision" and error["node"] == "rule"
    assert "'discount' (version 1)" in error["message"]
    assert "rules 1 and 2" in error["message"]
    assert error["message"].count("'discount'") == 1, error["message"]
    failure = engine.scalar(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "error"
        )
    )
    assert failure["rules"] == [1, 2] and failure["version"] == 1

    publish_decision(table_dmn("discount", [("&lt; 100", "0"), ("&gt;= 100", "0.1")]), "pricing")
    commit(steps.retry_instance(engine, instance_id))
    wait_for(lambda: load(engine, instance_id).status == "completed", what="the retry")
    assert load(engine, instance_id).vars["discount"] == 0
    assert [e["version"] for e in _evaluations(engine, instance_id)] == [2]


def _partitioned_doc() -> dict:
    return _routed(decision="discount", saveTo="discount")


def test_publishing_refuses_a_decision_not_published_for_the_partition_naming_task_and_id(
    engine, demo
):
    with pytest.raises(ProcessError) as refused:
        publish_document(_partitioned_doc(), key="fin", partition="finance")
    [problem] = [p for p in refused.value.problems if p.code == "decision.unpublished"]
    assert problem.element_id == "rule"
    assert "'discount'" in problem.message and "Work out the discount" in problem.message
    engine.rollback()

    publish_decision(table_dmn("discount", DISCOUNTS), "hr-pricing", partition="hr")
    with pytest.raises(ProcessError):
        publish_document(_partitioned_doc(), key="fin", partition="finance")
    engine.rollback()
    publish_decision(table_dmn("discount", DISCOUNTS), "fin-pricing", partition="finance")
    assert publish_document(_partitioned_doc(), key="fin", partition="finance").number == 1


def test_publishing_refuses_a_pinned_version_that_does_not_exist(engine, demo):
    publish_decision(table_dmn("discount", DISCOUNTS), "pricing")
    doc = _routed(decision="discount", binding="version", version=2)
    with pytest.raises(ProcessError) as refused:
        publish_document(doc)
    [problem] = [p for p in refused.value.problems if p.code == "decision.version_unknown"]
    assert problem.element_id == "rule" and "version 2" in problem.message


def test_a_multi_instance_business_rule_task_evaluates_once_per_item_in_collection_order(
    engine, demo
):
    publish_decision(table_dmn("discount", DISCOUNTS), "pricing")
    multi = {"sequential": False, "collection": "$input.amounts", "element": "amount"}
    version = publish_document(
        chain(("rule", node("businessRuleTask", decision="discount", multiInstance=multi)))
    )
    instance = load(engine, start(engine, version, input={"amounts": [5000, 20, 500]}))
    assert instance.status == "completed"
    assert instance.nodes["rule"] == [0.2, 0, 0.1]
    assert [e["matched"] for e in _evaluations(engine, instance.id)] == [[3], [1], [2]]
