"""The operations instance page on business rule tasks: each evaluation (decision, version,
matched rules, input values, outputs and result) in the history and under the task's
"Decisions evaluated", and a failed evaluation's incident naming decision, version and rules."""

from __future__ import annotations

from tests.helpers.decision_tasks import publish_decision, table_dmn
from tests.helpers.documents import chain, node
from tests.helpers.instances import start
from tests.helpers.pages import region, text_of
from tests.helpers.processes import publish_document


def _doc() -> dict:
    return chain(
        ("calc", node("scriptTask", "Take the amount", script="amount = $input.amount")),
        ("rule", node("businessRuleTask", "Work out the discount", decision="discount")),
    )


def test_the_evaluation_shows_in_the_history_and_the_decisions_region(operator, engine, demo):
    rules = [("&lt; 100", "0"), ("[100..1000)", "0.1"), ("&gt;= 1000", "0.2")]
    publish_decision(table_dmn("discount", rules), "pricing", partition="finance")
    version = publish_document(_doc(), "priced", partition="finance")
    instance_id = start(engine, version, input={"amount": 250})

    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    decisions = text_of(region(page, "live-decisions"))
    assert "Work out the discount" in decisions
    assert "decision discount v1 · matched rule 2" in decisions
    assert "inputs: amount = 250" in decisions
    assert "outputs: rule 2: discount = 0.1" in decisions and "result: 0.1" in decisions
    history = text_of(page[page.index('id="history"') :])
    assert "decision evaluated Work out the discount decision discount v1" in history


def test_the_evaluation_names_the_decision_beside_its_id(operator, engine, demo):
    rules = [("&lt; 100", "0"), ("&gt;= 100", "0.1")]
    dmn = table_dmn("discount", rules, name="Discount by amount")
    publish_decision(dmn, "pricing", partition="finance")
    version = publish_document(_doc(), "priced", partition="finance")
    instance_id = start(engine, version, input={"amount": 250})

    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    decisions = text_of(region(page, "live-decisions"))
    assert "decision Discount by amount discount v1 · matched rule 2" in decisions


def test_a_conflict_shows_as_the_incident_naming_the_rules(operator, engine, demo):
    # The overlap depends on the data (the limit), so publishing the decision cannot see it.
    publish_decision(table_dmn("discount", [("&lt; limit", "1"), ("&gt; 2", "2")]), "pricing")
    doc = _doc()
    doc["nodes"]["calc"]["config"]["script"] = "amount = $input.amount\nlimit = 10"
    version = publish_document(doc, "conflicting")
    instance_id = start(engine, version, input={"amount": 5})
    page = text_of(operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True))
    assert "decision 'discount' (version 1)" in page
    assert "rules 1 and 2 both match" in page
