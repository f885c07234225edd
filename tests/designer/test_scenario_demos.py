"""Scenarios over every demo process, as a modeller would write them: the paths each takes pass,
and a form answer the task refuses fails the scenario naming the step and the field."""

import pytest

from webapp.cli.demo_processes import customer_onboarding, expense_approval
from webapp.engine.scenario_runner import run
from webapp.process.scenarios import parse

EXPENSE = {"amount": 2500, "purpose": "Laptop", "category": "equipment"}


@pytest.fixture(autouse=True)
def _tools(app):
    """The app loads the registered tools the runner calls."""


def _expense(name: str, amount: int, actions: list, expect: dict) -> dict:
    return {"name": name, "input": {**EXPENSE, "amount": amount}, "actions": actions,
            "expect": expect}  # fmt: skip


@pytest.mark.parametrize(
    ("amount", "actions", "end", "reached", "not_reached"),
    [
        (200, [], "completed", ["notify", "paid"], ["review"]),
        (
            2500,
            [{"do": "complete", "node": "review", "data": {"decision": "approve"}}],
            "completed",
            ["review", "notify", "paid"],
            ["rejected"],
        ),
        (
            2500,
            [
                {
                    "do": "complete",
                    "node": "review",
                    "data": {"decision": "reject", "comment": "Over budget"},
                },
            ],
            "completed",
            ["review", "rejected"],
            ["notify", "paid"],
        ),
    ],
)
def test_the_expense_approval_paths_pass(amount, actions, end, reached, not_reached):
    scenario = _expense(
        "path", amount, actions, {"status": end, "reached": reached, "not_reached": not_reached}
    )
    result = run(expense_approval(), parse(scenario))
    assert result.passed, result.failure
    assert set(reached) <= result.nodes_walked
    assert not set(not_reached) & result.nodes_walked


def test_a_rejection_without_its_reason_fails_naming_the_field():
    actions = [{"do": "complete", "node": "review", "data": {"decision": "reject"}}]
    scenario = _expense("no reason", 2500, actions, {"status": "completed"})
    result = run(expense_approval(), parse(scenario))
    assert not result.passed
    assert result.failure.step == "actions[0]"
    assert "comment" in result.failure.reason.lower() or "why not" in result.failure.reason.lower()
    assert "review" in {wait["node"] for wait in result.waits}


def test_customer_onboarding_joins_the_call_and_the_cooled_off_account():
    scenario = {
        "name": "Onboarded",
        "input": {"customer": "ACME"},
        "actions": [
            {"do": "complete", "node": "call", "data": {}},
            {"do": "timer", "node": "wait"},
        ],
        "expect": {"status": "completed", "reached": ["call", "wait", "account", "join", "done"]},
    }
    result = run(customer_onboarding(), parse(scenario))
    assert result.passed, result.failure
    waiting = {**scenario, "actions": scenario["actions"][:1], "expect": {"status": "waiting"}}
    partial = run(customer_onboarding(), parse(waiting))
    assert partial.passed, partial.failure
    waits = {wait["node"] for wait in partial.waits}
    assert "wait" in waits and "call" not in waits
