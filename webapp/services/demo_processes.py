"""Demo processes for `seed-demo`: published, with a few instances, so every area has something
to show on a first `make run`. Each process is created once; an existing one is left alone."""

from __future__ import annotations

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


# (document builder, partition key, [(starter, input, business key)])
DEMO_PROCESSES = [
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
            instances.start(starter, version, input=data, business_key=business_key, via="ui")
    return created
