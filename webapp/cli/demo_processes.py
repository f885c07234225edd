"""Demo processes for `seed-demo`: published, with a few instances, so every area has something
to show on a first `make run`. Each process is created once; an existing one is left alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from webapp.extensions import db
from webapp.models import Partition, Process
from webapp.process.bpmn import auto_layout
from webapp.services import accounts, instances, processes


def _node(kind: str, title: str, **config: Any) -> dict[str, Any]:
    return {"kind": kind, "title": title, "config": config}


def _flow(source: str, target: str, condition: str | None = None, *, default: bool = False):
    return {"source": source, "target": target, "condition": condition, "default": default}


def _document(key: str, name: str, nodes: dict, flows: dict) -> dict[str, Any]:
    doc = {"format_version": 1, "key": key, "name": name, "nodes": nodes, "flows": flows}
    return auto_layout(doc)


def expense_approval() -> dict[str, Any]:
    """Finance: large expenses go to an approver; approved ones notify the finance desk."""
    start_form = {
        "fields": [
            {"key": "amount", "label": "Amount (EUR)", "type": "number", "required": True,
             "min": 1, "max": 100000},
            {"key": "purpose", "label": "Purpose", "type": "text", "required": True,
             "maxLength": 200},
            {"key": "category", "label": "Category", "type": "select", "required": True,
             "options": [{"value": "travel", "label": "Travel"},
                         {"value": "food", "label": "Food"},
                         {"value": "equipment", "label": "Equipment"}]},
        ]
    }  # fmt: skip
    review_form = {
        "fields": [
            {"key": "summary", "label": "Request", "type": "display",
             "value": "$input.purpose"},
            {"key": "amount", "label": "Amount (EUR)", "type": "display",
             "value": "$input.amount"},
            {"key": "category", "label": "Category", "type": "display",
             "value": "$input.category"},
            {"key": "decision", "label": "Decision", "type": "radio", "required": True,
             "options": [{"value": "approve", "label": "Approve"},
                         {"value": "reject", "label": "Reject"}]},
            {"key": "comment", "label": "Why not?", "type": "textarea", "required": True,
             "maxLength": 500, "visibleIf": "$form.decision == 'reject'"},
        ]
    }  # fmt: skip
    nodes = {
        "submitted": _node("startEvent", "Expense submitted", form=start_form),
        "check": _node(
            "serviceTask", "Check budget", tool="vars.set",
            inputs={"large": "$input.amount > 1000"}, saveTo="budget",
        ),
        "large": _node("exclusiveGateway", "Over 1,000?"),
        "review": _node(
            "userTask", "Approve expense", assignee={"type": "role", "value": "approver"},
            dueIn="P2D", form=review_form, saveTo="review",
        ),
        "approved": _node("exclusiveGateway", "Approved?"),
        "notify": _node(
            "serviceTask", "Notify finance", tool="email.send",
            inputs={
                "to": "'finance@example.org'",
                "subject": "'Expense to pay: ' + $input.purpose",
                "body": "'Category: ' + $input.category",
            },
        ),
        "paid": _node("endEvent", "Paid"),
        "rejected": _node("endEvent", "Rejected"),
    }  # fmt: skip
    flows = {
        "to_check": _flow("submitted", "check"),
        "to_large": _flow("check", "large"),
        "needs_review": _flow("large", "review", "$vars.budget.large == true"),
        "small": _flow("large", "notify", default=True),
        "to_approved": _flow("review", "approved"),
        "yes": _flow("approved", "notify", "$vars.review.decision == 'approve'"),
        "no": _flow("approved", "rejected", default=True),
        "to_paid": _flow("notify", "paid"),
    }
    return _document("expense-approval", "Expense approval", nodes, flows)


def customer_onboarding() -> dict[str, Any]:
    """No partition: a call by a clerk in parallel with a short wait and an automatic step."""
    start_form = {
        "fields": [{"key": "customer", "label": "Customer", "type": "text", "required": True}]
    }
    nodes = {
        "signed": _node("startEvent", "Customer signed", form=start_form),
        "split": _node("parallelGateway", "Split"),
        "call": _node(
            "userTask", "Welcome call", assignee={"type": "role", "value": "clerk"}, dueIn="P1D"
        ),
        "wait": _node("timerCatch", "Cooling-off minute", duration="PT1M"),
        "account": _node(
            "serviceTask", "Create account", tool="noop", inputs={"name": "$input.customer"}
        ),
        "join": _node("parallelGateway", "Join"),
        "done": _node("endEvent", "Onboarded"),
    }
    flows = {
        "f1": _flow("signed", "split"),
        "f2": _flow("split", "call"),
        "f3": _flow("split", "wait"),
        "f4": _flow("wait", "account"),
        "f5": _flow("call", "join"),
        "f6": _flow("account", "join"),
        "f7": _flow("join", "done"),
    }
    return _document("customer-onboarding", "Customer onboarding", nodes, flows)


def purchase_request() -> dict[str, Any]:
    """Finance: each chosen reviewer reviews the offer in parallel inside a sub-process, which
    reminds them by e-mail every day (twice) while reviews are open."""
    reviewers = [
        {"value": "alice", "label": "Alice Clerk"},
        {"value": "bob", "label": "Bob Approver"},
    ]
    start_form = {
        "fields": [
            {"key": "item", "label": "Item", "type": "text", "required": True, "maxLength": 200},
            {"key": "amount", "label": "Amount (EUR)", "type": "number", "required": True,
             "min": 1, "max": 100000},
            {"key": "reviewers", "label": "Reviewers", "type": "multiselect", "required": True,
             "options": reviewers, "default": ["alice", "bob"]},
        ]
    }  # fmt: skip
    offer_form = {
        "fields": [
            {"key": "item", "label": "Item", "type": "display", "value": "$input.item"},
            {"key": "amount", "label": "Amount (EUR)", "type": "display",
             "value": "$input.amount"},
            {"key": "approve", "label": "Approve the offer?", "type": "radio", "required": True,
             "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]},
        ]
    }  # fmt: skip
    nodes = {
        "requested": _node("startEvent", "Purchase requested", form=start_form),
        "review": _node("subProcess", "Review"),
        "review_start": {**_node("startEvent", "Review started"), "parent": "review"},
        "offer": {
            **_node(
                "userTask", "Review offer", assignee={"type": "expression", "value": "$item"},
                dueIn="P2D", form=offer_form, saveTo="reviews",
                multiInstance={
                    "sequential": False, "collection": "$input.reviewers",
                    "element": "reviewer", "completion": "$loop.completed >= 2",
                    "output": "$nodes.offer.approve",
                },
            ),
            "parent": "review",
        },
        "review_end": {**_node("endEvent", "Reviewed"), "parent": "review"},
        "reminder": _node(
            "boundaryEvent", "Every day", attachedTo="review", event="timer",
            cycle="R2/P1D", interrupting=False,
        ),
        "remind": _node(
            "serviceTask", "Remind reviewers", tool="email.send",
            inputs={
                "to": "'finance@example.org'",
                "subject": "'Offer still in review: ' + $input.item",
                "body": "'Please review the offer for ' + $input.item + ' in your inbox.'",
            },
        ),
        "reminded": _node("endEvent", "Reminded"),
        "record": _node(
            "serviceTask", "Record decision", tool="vars.set",
            inputs={"approved": "'no' not in $vars.reviews"}, saveTo="decision",
        ),
        "decided": _node("endEvent", "Decided"),
    }  # fmt: skip
    flows = {
        "f1": _flow("requested", "review"),
        "f2": _flow("review_start", "offer"),
        "f3": _flow("offer", "review_end"),
        "f4": _flow("reminder", "remind"),
        "f5": _flow("remind", "reminded"),
        "f6": _flow("review", "record"),
        "f7": _flow("record", "decided"),
    }
    return _document("purchase-request", "Purchase request", nodes, flows)


# (document builder, partition key, [(starter, input, business key)])
DemoProcess = tuple[Callable[[], dict[str, Any]], str | None, list[tuple[str, dict[str, Any], str]]]

DEMO_PROCESSES: list[DemoProcess] = [
    (
        expense_approval,
        "finance",
        [
            ("alice", {"amount": 2400, "purpose": "Conference in Lisbon", "category": "travel"},
             "EXP-1001"),
            ("alice", {"amount": 85, "purpose": "Team lunch", "category": "food"}, "EXP-1002"),
        ],
    ),
    (customer_onboarding, None, [("bob", {"customer": "Acme Ltd"}, "CUST-17")]),
    (
        purchase_request,
        "finance",
        [("alice", {"item": "Standing desks (4)", "amount": 1960, "reviewers": ["alice", "bob"]},
          "PUR-2001")],
    ),
]  # fmt: skip


def seed_demo_processes() -> int:
    """Publish the demo processes that do not exist yet and start their sample instances;
    returns how many processes were created. Needs the demo users (`seed_demo`)."""
    designer = accounts.find_user("designer")
    created = 0
    for build, partition_key, starts in DEMO_PROCESSES:
        doc = build()
        if db.session.scalar(select(Process.id).where(Process.key == doc["key"])) is not None:
            continue
        partition_id = None
        if partition_key:
            partition_id = db.session.scalar(
                select(Partition.id).where(Partition.key == partition_key)
            )
        process = processes.create_process(
            doc["key"], doc["name"], partition_id=partition_id, actor=designer, document=doc
        )
        version = processes.publish(process, actor=designer, note="Demo process")
        created += 1
        for username, data, business_key in starts:
            starter = accounts.find_user(username)
            if starter is None:
                raise LookupError(f"Demo user {username!r} is missing: run seed-demo first.")
            instances.start(starter, version, input=data, business_key=business_key, via="ui")
    return created
