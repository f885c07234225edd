"""The business rule task's panel: the decision (offered from those published for the
process's partition, or typed), its version binding, where the result goes and whether a match
is required; each field checked on the server."""

from __future__ import annotations

from tests.helpers.decision_tasks import publish_decision, table_dmn
from tests.helpers.designer import applied, html_of, incomplete, node, panel_post, refused, token

RULES = [("&lt; 100", "0"), ("&gt;= 100", "0.1")]


def test_the_panel_offers_the_decisions_published_for_the_partition(designer, pid, db_session):
    publish_decision(table_dmn("fin_discount", RULES), "fin", partition="finance")
    publish_decision(table_dmn("shared_vat", RULES), "shared")
    publish_decision(table_dmn("hr_bonus", RULES), "hr", partition="hr")
    html = html_of(designer, pid, "businessRuleTask", {"decision": "fin_discount"})
    assert '<datalist id="published-decisions">' in html
    assert '<option value="fin_discount">' in html and '<option value="shared_vat">' in html
    assert "hr_bonus" not in html, "another partition's decision"
    assert 'value="fin_discount"' in html and "A rule must match" in html


def test_the_panel_writes_decision_binding_result_and_required(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    fields = {"decision": "still_to_import", "binding": "version", "version": "3"}
    event = applied(
        panel_post(
            designer,
            pid,
            node("businessRuleTask", **fields, save_to="outcome", required="y"),
            csrf,
        )
    )
    assert event["config"] == {
        "decision": "still_to_import",
        "binding": "version",
        "version": 3,
        "saveTo": "outcome",
        "required": True,
    }
    latest = applied(panel_post(designer, pid, node("businessRuleTask", decision="d"), csrf))
    assert latest["config"] == {"decision": "d", "binding": "latest"}
    assert "Enter the decision to evaluate." in incomplete(
        panel_post(designer, pid, node("businessRuleTask", decision=" "), csrf)
    )
    assert "Enter the version number to evaluate." in incomplete(
        panel_post(designer, pid, node("businessRuleTask", decision="d", binding="version"), csrf)
    )
    assert "Use a plain name" in refused(
        panel_post(designer, pid, node("businessRuleTask", decision="d", save_to="1 x"), csrf)
    )
