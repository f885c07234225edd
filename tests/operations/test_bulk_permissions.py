"""The list's bulk form and a bulk operation's resume ask for the permission of the action: a user
holding instances.modify (not instances.manage) suspends, resumes and migrates in bulk, and no
more."""

from __future__ import annotations

import re

from tests.helpers.app import csrf_token
from tests.helpers.documents import waiting_doc
from tests.helpers.instances import load, start
from tests.helpers.processes import publish_document

MODIFIER = ["instances.read", "instances.modify"]


def _submit(client, confirm: str | None = "yes", **data):
    data = {"csrf_token": csrf_token(client, "/operations/instances"), **data}
    if confirm is not None:
        data["confirm"] = confirm
    return client.post("/operations/bulk", data=data)


def _operation_id(response) -> int:
    assert response.status_code == 303, response.get_data(as_text=True)[-3000:]
    return int(re.search(r"/operations/bulk/(\d+)$", response.headers["Location"]).group(1))


def _resume_operation(client, operation_id: int):
    token = csrf_token(client, f"/operations/bulk/{operation_id}")
    return client.post(f"/operations/bulk/{operation_id}/resume", data={"csrf_token": token})


def test_a_modifier_gets_the_bulk_form_with_the_actions_it_may_use(user_with, engine):
    instance_id = start(engine, publish_document(waiting_doc(), key="wait"))
    page = user_with(MODIFIER).get("/operations/instances?process=wait").get_data(as_text=True)
    assert f'name="ids" value="{instance_id}"' in page
    offered = re.findall(r'<option value="(\w+)"', page.split('id="bulk-form"', 1)[1])
    assert {"suspend", "resume", "migrate"} <= set(offered)
    assert not {"cancel", "retry"} & set(offered)


def test_a_modifier_suspends_in_bulk_and_resumes_the_operation(user_with, engine, db_session):
    from webapp.services.operations import bulk

    instance_id = start(engine, publish_document(waiting_doc(), key="wait"))
    client = user_with(MODIFIER)
    asked = _submit(client, confirm=None, action="suspend", reason="audit", ids=[str(instance_id)])
    assert asked.status_code == 303
    assert client.get(asked.headers["Location"]).status_code == 200  # the confirmation page
    operation_id = _operation_id(
        _submit(client, action="suspend", reason="audit", ids=[str(instance_id)])
    )
    progress = client.get(f"/operations/bulk/{operation_id}").get_data(as_text=True)
    assert f"/operations/bulk/{operation_id}/resume" in progress
    assert _resume_operation(client, operation_id).status_code == 303
    db_session.rollback()
    engine.rollback()
    report = bulk.run(operation_id)
    assert report["ok"] == 1
    assert load(engine, instance_id).suspended_at is not None


def test_a_modifier_may_not_cancel_in_bulk(user_with, engine):
    instance_id = start(engine, publish_document(waiting_doc(), key="wait"))
    client = user_with(MODIFIER)
    response = _submit(client, action="cancel", reason="x", ids=[str(instance_id)])
    assert response.status_code == 403
    assert load(engine, instance_id).status == "running"


def test_without_a_bulk_permission_there_is_no_bulk_form(user_with, engine):
    instance_id = start(engine, publish_document(waiting_doc(), key="wait"))
    reader = user_with(["instances.read"])
    page = reader.get("/operations/instances?process=wait").get_data(as_text=True)
    assert f'name="ids" value="{instance_id}"' not in page
    assert _submit(reader, action="suspend", reason="x", ids=[str(instance_id)]).status_code == 403
    assert load(engine, instance_id).suspended_at is None


def test_resuming_an_operation_needs_its_actions_permission(app, user_with, engine, db_session):
    from webapp.models import BulkOperation, User

    instance_id = start(engine, publish_document(waiting_doc(), key="wait"))
    client = user_with(MODIFIER)
    operation_id = _operation_id(
        _submit(client, action="suspend", reason="audit", ids=[str(instance_id)])
    )
    db_session.rollback()
    operation = db_session.get(BulkOperation, operation_id)
    # The same starter's operation of an action it may not use (as if cancel had been chosen).
    operation.action = "cancel"
    db_session.commit()
    assert db_session.get(User, operation.actor_id) is not None
    progress = client.get(f"/operations/bulk/{operation_id}").get_data(as_text=True)
    assert f"/operations/bulk/{operation_id}/resume" not in progress
    assert _resume_operation(client, operation_id).status_code == 403
