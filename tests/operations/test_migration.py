"""Migrating instances to another version through the API: dry run verdicts, apply on a worker,
the instances then running on the new version, refusals, repeats and permissions."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.app import csrf_token, make_user
from tests.helpers.http import basic
from tests.helpers.instances import complete, fire, load, open_tasks, pending_jobs, start
from tests.helpers.migration import first_version, second_version, structured_version
from tests.helpers.processes import publish_document
from tests.helpers.workers import run_burst
from webapp.models import BulkItem, HistoryEntry, Instance, Job, Task
from webapp.services.operations import bulk

URL = "/api/processes/mig/migrations"


def _versions(engine, **second):
    return (
        publish_document(first_version(), key="mig"),
        publish_document(second_version(**second), key="mig"),
    )


def _waiting(engine, v1) -> dict[str, int]:
    return {path: start(engine, v1, input={"path": path}) for path in ("task", "timer", "tool")}


def _post(client, body, user="operator"):
    return client.post(URL, json=body, headers=basic(user))


def _verdicts(response) -> dict[int, tuple[str, str]]:
    assert response.status_code == 200, response.get_json()
    return {v["instance"]: (v["verdict"], v["reason"]) for v in response.get_json()["verdicts"]}


def test_waiting_instances_migrate_and_finish_on_the_new_version(
    client, demo, engine, db_session, app_config
):
    v1, v2 = _versions(engine)
    ids = _waiting(engine, v1)
    task = open_tasks(engine, ids["task"])[0]
    timer = pending_jobs(engine, ids["timer"], "timer")[0]
    tool = pending_jobs(engine, ids["tool"], "tool")[0]

    dry = _post(client, {"from": 1, "to": 2, "dry_run": True})
    assert _verdicts(dry) == {i: ("as_is", "") for i in ids.values()}
    assert dry.get_json()["counts"] == {"as_is": 3}
    assert load(engine, ids["task"]).version == 1

    applied = _post(client, {"from": 1, "to": 2, "reason": "v2 adds a check"})
    assert applied.status_code == 202, applied.get_json()
    body = applied.get_json()
    assert body["total"] == 3 and body["progress"] == f"/api/migrations/{body['operation']}"
    # The tool's job went to the queue when the instance started: migrate before a worker runs it.
    bulk.run(body["operation"])
    run_burst(app_config)

    progress = client.get(body["progress"], headers=basic("operator")).get_json()
    assert progress["status"] == "done" and progress["counts"]["ok"] == 3
    assert {item["message"] for item in progress["items"]} == {"Migrated to v2."}
    for instance_id in ids.values():
        assert (load(engine, instance_id).version, load(engine, instance_id).version_id) == (
            2,
            v2.id,
        )
    moved = engine.get(Task, task.id)
    assert (moved.title, moved.assignee_id, moved.status) == (
        "Review again",
        task.assignee_id,
        "open",
    )
    assert [f["key"] for f in moved.form["fields"]] == ["approved", "note"]
    timer_after = engine.get(Job, timer.id)
    assert (timer_after.due_at, timer_after.status) == (timer.due_at, "pending")
    assert engine.get(Job, tool.id).key == tool.key

    complete(engine, engine.get(Task, task.id), {"approved": True})
    fire(engine, engine.get(Job, timer.id), ids["timer"])
    for instance_id in ids.values():
        assert [t.title for t in open_tasks(engine, instance_id)] == ["Check"]
        complete(engine, open_tasks(engine, instance_id)[0])
        assert load(engine, instance_id).status == "completed"
    entries = engine.scalars(
        select(HistoryEntry).where(HistoryEntry.kind == "migrated").order_by(HistoryEntry.id)
    ).all()
    assert [(e.instance_id, e.actor) for e in entries] == [(i, "operator") for i in ids.values()]
    assert entries[0].details == {"from": 1, "to": 2, "reason": "v2 adds a check"}


def test_a_removed_element_needs_a_mapping(client, demo, engine, db_session, app_config):
    v1, _ = _versions(engine, review="approve")
    ids = _waiting(engine, v1)
    claimed = open_tasks(engine, ids["task"])[0]

    verdicts = _verdicts(_post(client, {"from": 1, "to": 2, "dry_run": True}))
    assert verdicts[ids["task"]] == (
        "cannot",
        "It waits at user task 'Review', which v2 no longer has; choose a mapping.",
    )
    assert verdicts[ids["timer"]] == ("as_is", "")
    refused = _post(client, {"from": 1, "to": 2, "instances": [ids["task"]]})
    assert refused.status_code == 422
    assert (
        "None of the selected instances can migrate"
        in refused.get_json()["details"]["fields"]["instances"]
    )

    mapping = {"review": "approve"}
    body = {"from": 1, "to": 2, "mapping": mapping, "instances": [ids["task"]]}
    dry = _verdicts(_post(client, {**body, "dry_run": True}))
    assert dry == {ids["task"]: ("mapped", "")}
    assert _post(client, {**body, "dry_run": True}).get_json()["verdicts"][0]["mapping"] == mapping
    assert _post(client, body).status_code == 202
    run_burst(app_config)
    engine.rollback()
    task = engine.get(Task, claimed.id)
    assert (task.node_id, task.assignee_id, task.title) == (
        "approve",
        claimed.assignee_id,
        "Review again",
    )
    assert load(engine, ids["task"]).version == 2
    assert load(engine, ids["timer"]).version == 1
    migrated = engine.scalar(select(HistoryEntry).where(HistoryEntry.kind == "migrated"))
    assert migrated.details["mapping"] == mapping


def test_bad_requests_name_the_problem_and_change_nothing(client, demo, engine, db_session):
    v1, _ = _versions(engine, review="approve")
    ids = _waiting(engine, v1)
    other = start(engine, publish_document(first_version(), key="other"), input={"path": "task"})

    def refused(body, status):
        response = _post(client, body)
        assert response.status_code == status, response.get_json()
        return response.get_json()["message"]

    kind = refused({"from": 1, "to": 2, "mapping": {"review": "wait"}}, 422)
    assert "'review' is a user task and 'wait' in v2 is a timer" in kind
    assert "v2 has no node 'gone'" in refused(
        {"from": 1, "to": 2, "mapping": {"review": "gone"}}, 422
    )
    assert "v1 has no node 'nope'" in refused(
        {"from": 1, "to": 2, "mapping": {"nope": "approve"}}, 422
    )
    assert refused({"from": 1, "to": 9}, 404) == "Process 'mig' has no version 9."
    assert refused({"from": 1, "to": 1}, 422)
    assert "Instance" in refused({"from": 1, "to": 2, "instances": [other]}, 422)
    missing = client.post(
        "/api/processes/nothing/migrations", json={"from": 1, "to": 2}, headers=basic("operator")
    )
    assert missing.status_code == 404
    assert refused({"from": 1, "to": 2, "surprise": 1}, 422) == "Unknown fields."
    assert {load(engine, i).version for i in [*ids.values(), other]} == {1}
    assert engine.scalar(select(BulkItem.id)) is None


def test_repeating_a_migration_reports_instances_already_moved(
    client, login_as, engine, db_session, app_config
):
    v1, _ = _versions(engine)
    instance_id = start(engine, v1, input={"path": "task"})
    assert _post(client, {"from": 1, "to": 2}).status_code == 202
    run_burst(app_config)
    assert _verdicts(
        _post(client, {"from": 1, "to": 2, "dry_run": True, "instances": [instance_id]})
    ) == {instance_id: ("already", "Already on v2.")}
    again = _post(client, {"from": 1, "to": 2, "instances": [instance_id]})
    assert again.status_code == 202
    run_burst(app_config)
    progress = client.get(again.get_json()["progress"], headers=basic("operator")).get_json()
    assert progress["items"] == [
        {"instance": instance_id, "status": "ok", "message": "Already on v2."}
    ]
    migrated = engine.scalars(select(HistoryEntry).where(HistoryEntry.kind == "migrated")).all()
    assert len(migrated) == 1
    page = login_as("operator").get(f"/operations/instances/{instance_id}")
    assert page.status_code == 200 and 'data-kind="migrated"' in page.get_data(as_text=True)


def test_migrating_needs_instances_modify_in_the_partition(client, demo, engine, db_session, app):
    publish_document(first_version(), key="mig", partition="hr")
    v2 = publish_document(second_version(), key="mig", partition="hr")
    instance_id = start(engine, v2, input={"path": "task"})
    with app.app_context():
        make_user("fin-mod", ["instances.read", "instances.modify"], ["finance"], role="fin-mod",
                  password="flowdesk-demo")  # fmt: skip
        make_user("reader", ["instances.read", "instances.manage"], ["hr"], role="reader",
                  password="flowdesk-demo")  # fmt: skip
    body = {"from": 2, "to": 1, "dry_run": True}
    assert _post(client, body, user="alice").status_code == 403
    assert _post(client, body, user="reader").status_code == 403
    assert _post(client, body, user="fin-mod").status_code == 404
    assert _verdicts(_post(client, body)) == {instance_id: ("as_is", "")}
    assert engine.scalar(select(Instance.version).where(Instance.id == instance_id)) == 2


def test_the_instance_list_sends_its_selection_to_the_migration_page(login_as, engine, db_session):
    v1, _ = _versions(engine, review="approve")
    ids = _waiting(engine, v1)
    operator = login_as("operator")
    response = operator.post(
        "/operations/bulk",
        data={
            "csrf_token": csrf_token(operator, "/operations/instances"),
            "action": "migrate",
            "scope": "selected",
            "ids": [str(ids["task"]), str(ids["timer"])],
        },
    )
    assert response.status_code == 303
    location = response.headers["Location"]
    assert location.startswith("/operations/migrate?")
    page = operator.get(location)
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert 'name="from"' in text and 'value="1" selected' in text
    assert "Dry run: 2 instances from v1 to v2" in text
    assert "which v2 no longer has" in text and "Migrate as they are: <strong>1</strong>" in text
    assert f'<input type="hidden" name="ids" value="{ids["task"]}">' in text
    confirm = operator.get(f"/operations/bulk/confirm?action=migrate&ids={ids['task']}")
    assert confirm.status_code == 303
    assert confirm.headers["Location"].startswith("/operations/migrate?")
    refused = operator.get(location + "&map.review=wait")
    assert refused.status_code == 422
    assert (
        "&#39;review&#39; is a user task and &#39;wait&#39; in v2 is a timer"
        in refused.get_data(as_text=True)
    )


def test_a_multi_instance_task_in_a_sub_process_migrates_unless_its_collection_changed(
    client, demo, engine, db_session, app_config
):
    v1 = publish_document(structured_version(), key="mig")
    publish_document(structured_version(title="Cast a vote"), key="mig")
    publish_document(structured_version(collection="$input.others"), key="mig")
    instance_id = start(engine, v1, input={"people": ["alice", "bob"]})
    assert len(open_tasks(engine, instance_id)) == 2

    refused = _verdicts(_post(client, {"from": 1, "to": 3, "dry_run": True}))
    assert refused[instance_id] == (
        "cannot",
        "The collection of multi-instance user task 'Vote' changed in v3.",
    )
    assert _verdicts(_post(client, {"from": 1, "to": 2, "dry_run": True})) == {
        instance_id: ("as_is", "")
    }
    assert _post(client, {"from": 1, "to": 2}).status_code == 202
    run_burst(app_config)
    tasks = open_tasks(engine, instance_id)
    assert [t.title for t in tasks] == ["Cast a vote", "Cast a vote"]
    for task in tasks:
        complete(engine, task)
    assert (load(engine, instance_id).status, load(engine, instance_id).version) == ("completed", 2)
