"""Bulk cancel and retry: fixed selection, a real worker process, a report per instance."""

from __future__ import annotations

import re

from sqlalchemy import func, select

from tests.helpers.app import csrf_token, failed_page, make_user
from tests.helpers.documents import flaky_doc, waiting_doc
from tests.helpers.instances import load, start, start_many
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain, run_burst
from webapp.models import BulkItem, BulkOperation, HistoryEntry, Instance


def _submit(client, confirm: str | None = "yes", **data):
    """Post the bulk form, by default as the confirmation page does."""
    data = {"csrf_token": csrf_token(client, "/operations/instances"), **data}
    if confirm is not None:
        data["confirm"] = confirm
    return client.post("/operations/bulk", data=data)


def _operation_id(response) -> int:
    assert response.status_code == 303, response.get_data(as_text=True)[-3000:]
    return int(re.search(r"/operations/bulk/(\d+)$", response.headers["Location"]).group(1))


def test_a_bulk_retry_of_200_failed_instances_completes_them(
    operator, engine, app_config, test_tools, db_session
):
    version = publish_document(flaky_doc("bulk-200", 200), key="flaky")
    ids = start_many(engine, version, 200)
    drain(engine)
    statuses = engine.scalars(select(Instance.status).where(Instance.id.in_(ids))).all()
    assert set(statuses) == {"failed"} and len(statuses) == 200

    operation_id = _operation_id(
        _submit(operator, action="retry", scope="filter", process="flaky", status="failed")
    )
    page = operator.get(f"/operations/bulk/{operation_id}").get_data(as_text=True)
    assert "of 200 done" in page and 'hx-trigger="every 1s"' in page

    run_burst(app_config)

    db_session.rollback()
    done = db_session.scalars(select(Instance.status).where(Instance.id.in_(ids))).all()
    assert done == ["completed"] * 200
    operation = db_session.get(BulkOperation, operation_id)
    assert (operation.status, operation.total) == ("done", 200)
    page = operator.get(f"/operations/bulk/{operation_id}").get_data(as_text=True)
    assert "Finished:" in page and "200 ok" in page and 'hx-trigger="every 1s"' not in page
    retried = db_session.scalar(
        select(func.count()).where(HistoryEntry.kind == "retried", HistoryEntry.actor == "operator")
    )
    assert retried == 200


def test_a_bulk_cancel_reports_each_instance(operator, engine, app_config, db_session):
    waiting = start_many(engine, publish_document(waiting_doc(), key="wait"), 4)
    finished = start(engine, publish_document(waiting_doc(), key="done"))
    cancelled_first = waiting[0]
    path = f"/operations/instances/{cancelled_first}"
    operator.post(
        f"{path}/cancel", data={"reason": "early", "csrf_token": csrf_token(operator, path)}
    )
    selection = [*waiting, finished]
    response = _submit(
        operator,
        action="cancel",
        reason="supplier went bust",
        scope="selected",
        ids=[str(i) for i in selection],
    )
    operation_id = _operation_id(response)
    run_burst(app_config)

    db_session.rollback()
    items = dict(
        db_session.execute(
            select(BulkItem.instance_id, BulkItem.status).where(
                BulkItem.operation_id == operation_id
            )
        ).all()
    )
    assert items == {
        cancelled_first: "error",
        waiting[1]: "ok",
        waiting[2]: "ok",
        waiting[3]: "ok",
        finished: "ok",
    }
    page = operator.get(f"/operations/bulk/{operation_id}").get_data(as_text=True)
    assert "4 ok" in page and "1 refused" in page
    assert "only running or failed instances can be cancelled" in page
    assert page.index(f'data-instance="{cancelled_first}"') < page.index(
        f'data-instance="{waiting[1]}"'
    ), "refusals come first"
    for instance_id in waiting[1:]:
        assert load(engine, instance_id).status == "cancelled"
    reasons = db_session.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.kind == "cancelled", HistoryEntry.instance_id == waiting[1]
        )
    ).all()
    assert reasons == [{"reason": "supplier went bust"}]


def test_running_a_bulk_operation_twice_applies_each_instance_once(app, operator, engine):
    from webapp.services.operations import bulk

    ids = start_many(engine, publish_document(waiting_doc(), key="wait"), 3)
    operation_id = _operation_id(
        _submit(operator, action="cancel", reason="twice", scope="filter", process="wait")
    )
    with app.app_context():
        first = bulk.run(operation_id)
        second = bulk.run(operation_id)
    assert first == second == {"pending": 0, "ok": 3, "error": 0, "done": 3}
    engine.rollback()
    cancelled = engine.scalar(
        select(func.count()).where(
            HistoryEntry.kind == "cancelled", HistoryEntry.instance_id.in_(ids)
        )
    )
    assert cancelled == 3


def test_bulk_input_problems_are_shown_on_the_list(operator, engine):
    start(engine, publish_document(waiting_doc(), key="wait"))
    for confirm in (None, "yes"):
        no_reason = _submit(operator, confirm, action="cancel", scope="filter", process="wait")
        page = failed_page(operator, no_reason, "/operations/instances")
        assert "Say why these instances are cancelled." in page
        nothing = _submit(operator, confirm, action="retry", scope="selected")
        assert "Select at least one instance" in failed_page(
            operator, nothing, "/operations/instances"
        )
        no_action = _submit(operator, confirm, action="", scope="filter", process="wait")
        page = failed_page(operator, no_action, "/operations/instances")
        assert "Choose cancel, migrate, resume, retry or suspend." in page
        bad_filter = _submit(operator, confirm, action="retry", scope="filter", data="$vars.a >")
        page = failed_page(operator, bad_filter, "/operations/instances", 422)
        assert "unexpected end of expression" in page
    assert engine.scalar(select(func.count()).select_from(BulkOperation)) == 0


def _ticked(page: str) -> list[int]:
    boxes = re.findall(r'<input type="checkbox" name="ids" value="(\d+)"[^>]*>', page)
    checked = re.findall(r'<input type="checkbox" name="ids" value="(\d+)"[^>]* checked>', page)
    assert set(checked) <= set(boxes)
    return sorted(int(i) for i in checked)


def test_a_refused_bulk_action_keeps_the_ticks_and_what_was_typed(operator, engine):
    version = publish_document(waiting_doc(), key="wait")
    ids = start_many(engine, version, 3)
    listed = operator.get("/operations/instances?process=wait").get_data(as_text=True)
    assert _ticked(listed) == [], "nothing is ticked to begin with"
    assert '<option value="" selected>Choose…</option>' in listed, "no action is preselected"
    response = _submit(
        operator, None, action="cancel", reason="", ids=[str(i) for i in ids[:2]], process="wait"
    )
    page = failed_page(operator, response, "/operations/instances")
    assert response.headers["Location"].startswith("/operations/instances?process=wait&")
    assert "Say why these instances are cancelled." in page
    assert _ticked(page) == sorted(ids[:2]), "the ticks stay"
    assert '<option value="cancel" selected>' in page
    assert engine.scalar(select(func.count()).select_from(BulkOperation)) == 0


def test_a_bulk_cancel_asks_cancel_n_instances_first(operator, engine, db_session):
    version = publish_document(waiting_doc(), key="wait")
    ids = start_many(engine, version, 3)
    chosen = [str(i) for i in ids[:2]]
    asked = _submit(operator, None, action="cancel", reason="dupes", ids=chosen, process="wait")
    assert asked.status_code == 303
    assert asked.location.startswith("/operations/bulk/confirm?")
    confirm = operator.get(asked.location)
    page = confirm.get_data(as_text=True)
    assert confirm.status_code == 200
    assert "<h1>Cancel 2 instances?</h1>" in page and "Reason: “dupes”" in page
    assert "Yes, cancel 2 instances</button>" in page
    assert engine.scalar(select(func.count()).select_from(BulkOperation)) == 0, "not yet"
    back = re.search(r'<a class="button" href="([^"]+)">No, go back</a>', page)[1]
    listed = operator.get(back.replace("&amp;", "&")).get_data(as_text=True)
    assert _ticked(listed) == sorted(ids[:2]), "going back keeps the ticks"
    assert 'value="dupes"' in listed

    form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page))
    assert form["confirm"] == "yes" and form["action"] == "cancel"
    hidden_ids = re.findall(r'<input type="hidden" name="ids" value="(\d+)">', page)
    assert sorted(hidden_ids) == sorted(chosen)
    operation_id = _operation_id(
        operator.post("/operations/bulk", data={**form, "ids": hidden_ids})
    )
    db_session.rollback()
    operation = db_session.get(BulkOperation, operation_id)
    assert (operation.action, operation.reason, operation.total) == ("cancel", "dupes", 2)

    everything = _submit(operator, None, action="retry", scope="filter", process="wait")
    page = operator.get(everything.location).get_data(as_text=True)
    assert "<h1>Retry 3 instances?</h1>" in page and "all instances matching" in page.lower()


def test_a_bulk_selection_keeps_only_instances_the_user_may_see(app, operator, engine, db_session):
    from tests.helpers.app import login

    hr_one = start(engine, publish_document(waiting_doc(), key="leave", partition="hr"))
    finance_one = start(engine, publish_document(waiting_doc(), key="inv", partition="finance"))
    make_user("fin", ["instances.read", "instances.manage"], ["finance"], role="finance-ops")
    fin = app.test_client()
    login(fin, "fin", "password-123")
    operation_id = _operation_id(
        _submit(fin, action="cancel", reason="x", ids=[str(hr_one), str(finance_one)])
    )
    db_session.rollback()
    selected = db_session.scalars(
        select(BulkItem.instance_id).where(BulkItem.operation_id == operation_id)
    ).all()
    assert selected == [finance_one]
    assert operator.get(f"/operations/bulk/{operation_id}").status_code == 404, (
        "only its author (or an admin) follows an operation"
    )


def test_bulk_needs_the_manage_permission(login_as, engine):
    start(engine, publish_document(waiting_doc(), key="wait"))
    designer = login_as("designer")
    response = _submit(designer, action="cancel", reason="x", scope="filter", process="wait")
    assert response.status_code == 403


def test_a_bulk_operation_checks_the_partition_again_when_it_runs(
    app, operator, engine, db_session
):
    from tests.helpers.app import login
    from webapp.extensions import db
    from webapp.models import User
    from webapp.services import accounts
    from webapp.services.operations import bulk

    invoice = start(engine, publish_document(waiting_doc(), key="inv", partition="finance"))
    with app.app_context():
        make_user("fin", ["instances.read", "instances.manage"], ["finance"], role="finance-ops")
    fin = app.test_client()
    login(fin, "fin", "password-123")
    operation_id = _operation_id(_submit(fin, action="cancel", reason="x", ids=[str(invoice)]))

    with app.app_context():
        member = db.session.scalar(select(User).where(User.username == "fin"))
        accounts.update_user(
            member, display_name="fin", email="", active=True, roles=member.roles, partitions=[]
        )
        report = bulk.run(operation_id)
    assert (report["ok"], report["error"]) == (0, 1)
    db_session.rollback()
    item = db_session.scalar(select(BulkItem).where(BulkItem.operation_id == operation_id))
    assert item.status == "error" and "no longer" in item.message
    assert load(engine, invoice).status == "running"
