"""Compensation and transactions on the real database (in-process steps): the order handlers
run in, the data they see, each completion undone once, sub-processes, multi-instance bodies,
compensation event sub-processes, and cancel ends leaving a transaction."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.compensation import booking, compensated_in_order, handler, saga
from tests.helpers.documents import document, flow, inside, node, wire
from tests.helpers.instances import (
    complete,
    entered,
    fire,
    load,
    open_tasks,
    pending_jobs,
    start,
)
from tests.helpers.processes import publish_document
from webapp.engine import migration
from webapp.models import Compensation
from webapp.models.base import utcnow
from webapp.models.statuses import CompensationStatus
from webapp.services.jobs import commit


def test_a_throw_runs_the_handlers_of_completed_activities_newest_first(engine, demo, app):
    version = publish_document(saga())
    instance_id = start(engine, version, input={"price": 7})
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert compensated_in_order(engine, instance_id) == ["undo_hotel", "undo_flight"]
    assert instance.vars["refund_flight"] == 7
    assert instance.vars["refund_hotel"] == 14


def test_handlers_see_the_data_as_the_activity_completed(engine, demo, app):
    version = publish_document(saga(change_after=True))
    instance = load(engine, start(engine, version, input={"price": 7}))
    # `price_now` was 7 when the flight was booked and 100 by the time of the throw.
    assert instance.vars["price_now"] == 100
    assert instance.vars["refund_flight"] == 7


def test_a_second_throw_compensates_nothing_again(engine, demo, app):
    version = publish_document(saga(throws=2))
    instance_id = start(engine, version, input={"price": 7})
    assert load(engine, instance_id).status == "completed"
    assert compensated_in_order(engine, instance_id) == ["undo_hotel", "undo_flight"]
    engine.rollback()
    rows = engine.scalars(select(Compensation).where(Compensation.instance_id == instance_id))
    assert {row.status for row in rows} == {CompensationStatus.COMPENSATED}


def test_a_throw_naming_one_activity_undoes_only_that_one(engine, demo, app):
    version = publish_document(saga(activity="book_flight"))
    instance_id = start(engine, version, input={"price": 7})
    assert compensated_in_order(engine, instance_id) == ["undo_flight"]


def test_an_activity_that_never_completed_is_not_compensated(engine, demo, app):
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        **booking("flight", script="price_now = 1"),
        "wait": node("userTask", "Wait", assignee={"type": "role", "value": "approver"}),
        "undo_wait": handler("undone_wait = 1"),
        "comp_wait": node(
            "boundaryEvent", event="compensate", attachedTo="wait", handler="undo_wait"
        ),
        "throw": node("compensationThrow"),
        "end": node("endEvent"),
        "end2": node("endEvent"),
    }
    flows = {
        **wire("start", "split"),
        "a": flow("split", "book_flight"),
        "b": flow("split", "wait"),
        **wire("book_flight", "throw", "end"),
        **wire("wait", "end2"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"price": 7})
    assert compensated_in_order(engine, instance_id) == ["undo_flight"]
    instance = load(engine, instance_id)
    assert "undone_wait" not in instance.vars
    complete(engine, open_tasks(engine, instance_id)[0])
    assert load(engine, instance_id).status == "completed"


def test_a_handler_task_makes_the_throw_wait(engine, demo, app):
    nodes = {
        "start": node("startEvent"),
        **booking("flight", script="price_now = 1"),
        "throw": node("compensationThrow"),
        "after": node("scriptTask", script="after = 1"),
        "end": node("endEvent"),
    }
    nodes["undo_flight"] = node(
        "userTask", "Cancel flight", assignee={"type": "role", "value": "approver"}
    )
    version = publish_document(
        document(nodes, wire("start", "book_flight", "throw", "after", "end"))
    )
    instance_id = start(engine, version, input={"price": 7})
    assert load(engine, instance_id).status == "running"
    assert "after" not in load(engine, instance_id).vars
    (task,) = open_tasks(engine, instance_id)
    assert task.node_id == "undo_flight"
    complete(engine, task)
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["after"] == 1


def test_compensating_a_sub_process_undoes_its_inner_activities(engine, demo, app):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess", "Trip"),
        "s_start": inside("sub", "startEvent"),
        **{k: {**v, "parent": "sub"} for k, v in booking("flight", script="price_now = 1").items()},
        **{k: {**v, "parent": "sub"} for k, v in booking("hotel", script="price_now = 2").items()},
        "s_end": inside("sub", "endEvent"),
        "throw": node("compensationThrow"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "sub", "throw", "end"),
        **wire("s_start", "book_flight", "book_hotel", "s_end"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"price": 7})
    assert load(engine, instance_id).status == "completed"
    assert compensated_in_order(engine, instance_id) == ["undo_hotel", "undo_flight"]


def test_compensation_of_a_multi_instance_undoes_each_instance_with_its_item(engine, demo, app):
    nodes = {
        "start": node("startEvent"),
        "book": node(
            "scriptTask",
            "Book",
            script="booked = $item",
            multiInstance={"collection": "$input.items", "sequential": True},
        ),
        "undo": handler("last_undone = $item"),
        "comp": node("boundaryEvent", event="compensate", attachedTo="book", handler="undo"),
        "throw": node("compensationThrow"),
        "end": node("endEvent"),
    }
    version = publish_document(document(nodes, wire("start", "book", "throw", "end")))
    instance_id = start(engine, version, input={"items": ["a", "b", "c"]})
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert compensated_in_order(engine, instance_id) == ["undo", "undo", "undo"]
    # Newest first: "c", "b", then "a" is the last one undone.
    assert instance.vars["last_undone"] == "a"


def test_a_compensation_event_sub_process_runs_instead_of_the_inner_handlers(engine, demo, app):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess", "Trip"),
        "s_start": inside("sub", "startEvent"),
        **{k: {**v, "parent": "sub"} for k, v in booking("flight", script="price_now = 1").items()},
        "s_end": inside("sub", "endEvent"),
        "esp": inside("sub", "eventSubProcess", "Undo trip"),
        "e_start": inside("esp", "startEvent", event="compensate"),
        "e_note": inside("esp", "scriptTask", "Note", script="noted = 1"),
        "e_throw": inside("esp", "compensationThrow"),
        "e_end": inside("esp", "endEvent"),
        "throw": node("compensationThrow"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "sub", "throw", "end"),
        **wire("s_start", "book_flight", "s_end"),
        **wire("e_start", "e_note", "e_throw", "e_end"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"price": 7})
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["noted"] == 1
    names = entered(engine, instance_id)
    assert names.index("e_note") < names.index("undo_flight") < names.index("e_end")


def _transaction(cancel: bool) -> dict:
    nodes = {
        "start": node("startEvent"),
        "tx": node("transaction", "Payment"),
        "t_start": inside("tx", "startEvent"),
        **{k: {**v, "parent": "tx"} for k, v in booking("flight", script="price_now = 1").items()},
        "t_gate": inside("tx", "exclusiveGateway"),
        "t_cancel": inside("tx", "endEvent", event="cancel"),
        "t_end": inside("tx", "endEvent"),
        "cancelled": node("boundaryEvent", event="cancel", attachedTo="tx"),
        "after_cancel": node("scriptTask", script="outcome = 'cancelled'"),
        "c_end": node("endEvent"),
        "after": node("scriptTask", script="outcome = 'done'"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "tx", "after", "end"),
        **wire("t_start", "book_flight", "t_gate"),
        "to_cancel": flow("t_gate", "t_cancel", "$input.cancel"),
        "to_end": flow("t_gate", "t_end", default=True),
        **wire("cancelled", "after_cancel", "c_end"),
    }
    return document(nodes, flows)


def test_a_cancel_end_compensates_the_transaction_and_leaves_by_its_cancel_boundary(
    engine, demo, app
):
    version = publish_document(_transaction(True))
    instance_id = start(engine, version, input={"price": 7, "cancel": True})
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["outcome"] == "cancelled"
    assert compensated_in_order(engine, instance_id) == ["undo_flight"]


def test_a_transaction_that_completes_compensates_nothing(engine, demo, app):
    version = publish_document(_transaction(False))
    instance_id = start(engine, version, input={"price": 7, "cancel": False})
    instance = load(engine, instance_id)
    assert instance.vars["outcome"] == "done"
    assert compensated_in_order(engine, instance_id) == []


def test_a_timer_event_sub_process_added_inside_a_running_transaction_listens_after_migrating(
    engine, demo
):
    clerk = {"type": "role", "value": "approver"}
    nodes = {
        "start": node("startEvent"),
        "tx": node("transaction", "Payment"),
        "t_start": inside("tx", "startEvent"),
        "t_task": inside("tx", "userTask", "Pay", assignee=clerk),
        "t_end": inside("tx", "endEvent"),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "tx", "end"), **wire("t_start", "t_task", "t_end")}
    v1 = publish_document(document(nodes, flows), key="tx_migrate")
    nodes.update(
        chase=inside("tx", "eventSubProcess", "Chase"),
        c_start=inside("chase", "startEvent", event="timer", duration="PT1H", interrupting=False),
        c_end=inside("chase", "endEvent"),
    )
    flows.update(wire("c_start", "c_end"))
    v2 = publish_document(document(nodes, flows), key="tx_migrate")
    instance_id = start(engine, v1)
    plan = migration.plan(v1, v2, {})
    commit(
        migration.migrate_instance(
            engine, instance_id, v1.id, v2.id, plan, actor="operator", now=utcnow()
        )
    )
    assert [job.node_id for job in pending_jobs(engine, instance_id, "timer")] == ["c_start"]


def test_a_throw_that_does_not_wait_goes_on_while_its_handler_runs(engine, demo, app):
    clerk = {"type": "role", "value": "approver"}
    nodes = {
        "start": node("startEvent"),
        **booking("flight", script="price_now = 1"),
        "throw": node("compensationThrow", waitForCompletion=False),
        "after": node("scriptTask", script="after = 1"),
        "end": node("endEvent"),
    }
    nodes["undo_flight"] = node("userTask", "Cancel flight", assignee=clerk)
    version = publish_document(
        document(nodes, wire("start", "book_flight", "throw", "after", "end"))
    )
    instance_id = start(engine, version)
    instance = load(engine, instance_id)
    assert instance.vars["after"] == 1
    assert instance.status == "running", "the handler still keeps the process open"
    (task,) = open_tasks(engine, instance_id)
    assert task.node_id == "undo_flight"
    complete(engine, task)
    assert load(engine, instance_id).status == "completed"


def test_a_cancel_end_ends_the_other_branches_and_compensates_only_what_completed(
    engine, demo, app
):
    clerk = {"type": "role", "value": "approver"}
    nodes = {
        "start": node("startEvent"),
        "tx": node("transaction", "Trip"),
        "t_start": inside("tx", "startEvent"),
        "t_split": inside("tx", "parallelGateway"),
        **{k: {**v, "parent": "tx"} for k, v in booking("flight", script="price_now = 1").items()},
        **{k: {**v, "parent": "tx"} for k, v in booking("hotel", script="price_now = 2").items()},
        "t_cancel": inside("tx", "endEvent", event="cancel"),
        "t_end": inside("tx", "endEvent"),
        "cancelled": node("boundaryEvent", event="cancel", attachedTo="tx"),
        "c_end": node("endEvent"),
        "end": node("endEvent"),
    }
    nodes["book_hotel"] = inside("tx", "userTask", "Book hotel", assignee=clerk)
    nodes["undo_hotel"] = inside("tx", "scriptTask", "Cancel hotel", script="undone_hotel = 1")
    flows = {
        **wire("start", "tx", "end"),
        **wire("t_start", "t_split"),
        "a": flow("t_split", "book_flight"),
        "b": flow("t_split", "book_hotel"),
        **wire("book_flight", "t_cancel"),
        **wire("book_hotel", "t_end"),
        **wire("cancelled", "c_end"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version)
    assert load(engine, instance_id).status == "completed"
    assert compensated_in_order(engine, instance_id) == ["undo_flight"]
    assert open_tasks(engine, instance_id) == []
    assert "c_end" in entered(engine, instance_id)


def test_an_error_leaving_a_transaction_compensates_nothing(engine, demo, app):
    nodes = {
        "start": node("startEvent"),
        "tx": node("transaction", "Payment"),
        "t_start": inside("tx", "startEvent"),
        **{k: {**v, "parent": "tx"} for k, v in booking("flight", script="price_now = 1").items()},
        "t_error": inside("tx", "endEvent", event="error", code="REFUSED"),
        "on_error": node("boundaryEvent", event="error", code="REFUSED", attachedTo="tx"),
        "e_end": node("endEvent"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "tx", "end"),
        **wire("t_start", "book_flight", "t_error"),
        **wire("on_error", "e_end"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version)
    assert load(engine, instance_id).status == "completed"
    assert "e_end" in entered(engine, instance_id)
    assert compensated_in_order(engine, instance_id) == []


def test_a_throw_inside_a_multi_instance_sub_process_undoes_only_its_own_instance(
    engine, demo, app
):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess", "Per item", multiInstance={"collection": "$input.items"}),
        "s_start": inside("sub", "startEvent"),
        "book": inside("sub", "scriptTask", script="booked = $item"),
        "comp": inside(
            "sub", "boundaryEvent", event="compensate", attachedTo="book", handler="undo"
        ),
        "undo": inside("sub", "scriptTask", "Undo", script="undone = $item"),
        "s_throw": inside("sub", "compensationThrow"),
        "s_end": inside("sub", "endEvent"),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "sub", "end"), **wire("s_start", "book", "s_throw", "s_end")}
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"items": ["a", "b"]})
    assert load(engine, instance_id).status == "completed"
    assert compensated_in_order(engine, instance_id) == ["undo", "undo"]
    engine.rollback()
    rows = engine.scalars(select(Compensation).where(Compensation.instance_id == instance_id))
    by_node = sorted((row.node_id, row.status) for row in rows)
    # Each instance's booking once; each instance of the sub-process is itself remembered.
    assert by_node == [
        ("book", CompensationStatus.COMPENSATED),
        ("book", CompensationStatus.COMPENSATED),
        ("sub", CompensationStatus.COMPLETED),
        ("sub", CompensationStatus.COMPLETED),
    ]


def test_a_sub_process_an_interrupting_boundary_ended_is_not_compensated(engine, demo, app):
    clerk = {"type": "role", "value": "approver"}
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess", "Trip"),
        "s_start": inside("sub", "startEvent"),
        **{k: {**v, "parent": "sub"} for k, v in booking("flight", script="price_now = 1").items()},
        "wait": inside("sub", "userTask", "Confirm", assignee=clerk),
        "s_end": inside("sub", "endEvent"),
        "late": node("boundaryEvent", event="timer", duration="PT1H", attachedTo="sub"),
        "throw": node("compensationThrow"),
        "t_end": node("endEvent"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "sub", "end"),
        **wire("s_start", "book_flight", "wait", "s_end"),
        **wire("late", "throw", "t_end"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version)
    (timer,) = pending_jobs(engine, instance_id, "timer")
    fire(engine, timer, instance_id)
    assert load(engine, instance_id).status == "completed"
    assert "throw" in entered(engine, instance_id)
    assert compensated_in_order(engine, instance_id) == []


def test_a_handler_of_several_steps_reads_what_its_own_steps_wrote(engine, demo, app):
    nodes = {
        "start": node("startEvent"),
        "book": node("scriptTask", "Book", script="price_now = 10"),
        "comp": node("boundaryEvent", event="compensate", attachedTo="book", handler="undo"),
        "undo": node("subProcess", "Undo the booking"),
        "u_start": inside("undo", "startEvent"),
        "u_fee": inside("undo", "scriptTask", script="fee = $vars.price_now + 1"),
        "u_total": inside("undo", "scriptTask", script="refund_total = $vars.fee * 2"),
        "u_end": inside("undo", "endEvent"),
        "later": node("scriptTask", script="price_now = 100"),
        "throw": node("compensationThrow"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "book", "later", "throw", "end"),
        **wire("u_start", "u_fee", "u_total", "u_end"),
    }
    version = publish_document(document(nodes, flows))
    instance = load(engine, start(engine, version))
    assert instance.status == "completed"
    assert instance.vars["fee"] == 11, "the price as booked"
    assert instance.vars["refund_total"] == 22, "the fee its previous step wrote"
