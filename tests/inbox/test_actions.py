"""Task actions through HTTP: claim, release, reassign, complete; who may see what; stale state."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.helpers.app import failed_page, make_user
from tests.helpers.inbox import INBOX, htmx, kinds, open_task, post
from tests.helpers.instances import cancel, start_latest
from webapp.models import HistoryEntry, Instance, Task, User


def task_of(db_session, task_id: int) -> Task:
    db_session.expire_all()
    return db_session.get(Task, task_id)


def user_id(db_session, username: str) -> int:
    return db_session.scalar(select(User.id).where(User.username == username))


def details(db_session, instance_id: int, kind: str) -> list[dict]:
    rows = db_session.scalars(
        select(HistoryEntry)
        .where(HistoryEntry.instance_id == instance_id, HistoryEntry.kind == kind)
        .order_by(HistoryEntry.id)
    ).all()
    return [{"actor": row.actor, "node": row.node_id, **row.details} for row in rows]


def test_claim_and_release_write_history(users, flows, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    alice, bob = users("alice"), users("bob")
    response = post(bob, f"/inbox/tasks/{review.id}/claim")
    assert response.status_code == 303
    assert response.headers["Location"] == f"/inbox/tasks/{review.id}"
    assert "“Review expense” is now yours." in bob.get(response.headers["Location"]).get_data(
        as_text=True
    )
    claimed = task_of(db_session, review.id)
    assert claimed.assignee_id == user_id(db_session, "bob") and claimed.claimed_at is not None
    assert alice.get(f"/inbox/tasks/{review.id}").status_code == 404, "no longer alice's to see"
    late = post(alice, f"/inbox/tasks/{review.id}/claim")
    page = failed_page(alice, late, f"/inbox/tasks/{review.id}", 409)
    assert "Bob Approver has claimed this task" in page
    again = post(bob, f"/inbox/tasks/{review.id}/claim")
    assert again.status_code == 303, "claiming one's own task again is harmless"

    page = bob.get(f"/inbox/tasks/{review.id}").get_data(as_text=True)
    assert "Release to clerk" in page
    released = post(bob, f"/inbox/tasks/{review.id}/release")
    assert released.status_code == 303 and released.headers["Location"] == INBOX
    assert task_of(db_session, review.id).assignee_id is None
    assert alice.get(f"/inbox/tasks/{review.id}").status_code == 200
    assert post(alice, f"/inbox/tasks/{review.id}/release").status_code == 409
    assert details(db_session, review.instance_id, "task_claimed") == [
        {"actor": "bob", "node": "review", "task": review.id, "role": "clerk"}
    ]
    assert details(db_session, review.instance_id, "task_released") == [
        {"actor": "bob", "node": "review", "task": review.id, "role": "clerk"}
    ]


def test_a_directly_assigned_task_cannot_be_released(users, flows, app, db_session):
    sign = open_task(db_session, start_latest(app, "direct"))
    bob = users("bob")
    assert "Release to" not in bob.get(f"/inbox/tasks/{sign.id}").get_data(as_text=True)
    refused = post(bob, f"/inbox/tasks/{sign.id}/release")
    assert refused.status_code == 409
    assert "no role to go back to" in refused.get_data(as_text=True)
    assert task_of(db_session, sign.id).assignee_id == user_id(db_session, "bob")


def test_operators_reassign_to_a_user_or_a_role(users, flows, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    operator = users("operator")
    page = operator.get(f"/inbox/tasks/{review.id}").get_data(as_text=True)
    assert f'action="/inbox/tasks/{review.id}/reassign"' in page
    assert 'id="task-form"' not in page, "operators see the task but do not work it"
    assert '<option value="approver">approver</option>' in page
    assert '<option value="designer">' not in page, "designers cannot work tasks"

    to_bob = post(operator, f"/inbox/tasks/{review.id}/reassign", {"username": "Bob", "note": "x"})
    assert to_bob.status_code == 303
    assert task_of(db_session, review.id).assignee_id == user_id(db_session, "bob")
    to_role = post(operator, f"/inbox/tasks/{review.id}/reassign", {"role": "approver"})
    assert to_role.status_code == 303
    moved = task_of(db_session, review.id)
    assert (moved.assignee_id, moved.candidate_role.name) == (None, "approver")
    assert users("alice").get(f"/inbox/tasks/{review.id}").status_code == 404
    assert details(db_session, review.instance_id, "task_reassigned") == [
        {"actor": "operator", "node": "review", "task": review.id, "to_user": "bob",
         "from_role": "clerk", "note": "x"},
        {"actor": "operator", "node": "review", "task": review.id, "to_role": "approver",
         "from_user": "bob", "from_role": "clerk"},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "Give either a user or a role."),
        ({"username": "bob", "role": "clerk"}, "Give either a user or a role."),
        ({"username": "nobody"}, "There is no active user &#39;nobody&#39;."),
        (
            {"username": "designer"},
            "Dana Designer may not work tasks in this task&#39;s partition.",
        ),
        ({"role": "designer"}, "The role &#39;designer&#39; does not grant working tasks."),
        ({"role": "ghosts"}, "There is no role &#39;ghosts&#39;."),
        ({"username": "bob", "note": "n" * 501}, "Field cannot be longer than 500 characters."),
    ],
)
def test_reassign_checks_its_input(users, flows, app, db_session, data, message):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    response = post(users("operator"), f"/inbox/tasks/{review.id}/reassign", data)
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert message in page
    summary = page.split('id="errors" role="alert" tabindex="-1" autofocus>')[1].split("</div>")[0]
    assert "The task was not reassigned:" in summary and message in summary
    assert details(db_session, review.instance_id, "task_reassigned") == []


def test_reassign_is_for_operators_of_the_partition(users, flows, app, db_session, demo):

    with app.app_context():
        make_user(
            "fin-op",
            ["instances.read", "instances.manage"],
            ["finance"],
            role="manager",
            password="flowdesk-demo",
        )
    screen = open_task(db_session, start_latest(app, "hr"))
    assert (
        post(users("alice"), f"/inbox/tasks/{screen.id}/reassign", {"role": "clerk"}).status_code
        == 403
    )
    assert users("fin-op").get(f"/inbox/tasks/{screen.id}/reassign").status_code == 404
    assert users("operator").get(f"/inbox/tasks/{screen.id}/reassign").status_code == 200
    assert users("operator").get("/inbox/tasks/999999/reassign").status_code == 404


# (process, node) -> who sees the task page (200); everyone else gets 404.
ACCESS = {
    ("expense", "review"): {"alice", "bob", "operator", "admin"},
    ("fin", "check"): {"bob", "operator", "admin"},
    ("hr", "screen"): {"operator", "admin"},
    ("direct", "sign"): {"bob", "operator", "admin"},
}


@pytest.mark.parametrize(("process", "node_id"), list(ACCESS))
def test_access_matrix(users, flows, app, db_session, process, node_id):
    task = open_task(db_session, start_latest(app, process), node_id)
    for username in ("alice", "bob", "operator", "admin", "designer"):
        client = users(username)
        expected = 200 if username in ACCESS[(process, node_id)] else 404
        assert client.get(f"/inbox/tasks/{task.id}").status_code == expected, username
        workable = username in ACCESS[(process, node_id)] - {"operator", "admin"}
        page = client.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
        assert ('id="task-form"' in page) is workable, username
        if not workable and username not in ("operator", "designer"):
            refused = post(client, f"/inbox/tasks/{task.id}", {"amount": "5"})
            sees = username in ACCESS[(process, node_id)]
            assert refused.status_code in ((403, 409) if sees else (404,)), username
            assert post(client, f"/inbox/tasks/{task.id}/form", {}).status_code == 404
    assert users("alice").get("/inbox/tasks/999999").status_code == 404
    assert post(users("operator"), f"/inbox/tasks/{task.id}", {}).status_code == 403
    assert task_of(db_session, task.id).status == "open"


def test_completing_moves_the_instance_on_at_once(users, flows, app, db_session):
    instance_id = start_latest(app, "expense", business_key="EXP-7")
    review = open_task(db_session, instance_id, "review")
    alice = users("alice")
    done = post(alice, f"/inbox/tasks/{review.id}", {"amount": "40"})
    approve = open_task(db_session, instance_id, "approve")
    assert done.headers["Location"] == f"/inbox/tasks/{approve.id}", "the next task of alice's"
    page = alice.get(done.headers["Location"]).get_data(as_text=True)
    assert (
        f"Completed “Review expense”. Instance {instance_id} moved on to: Approve expense." in page
    )
    assert "EXP-7" in page and "version 1" in page
    finished = post(alice, f"/inbox/tasks/{approve.id}", {"decision": "yes"})
    assert finished.headers["Location"] == INBOX
    assert f"Instance {instance_id} is complete." in alice.get(INBOX).get_data(as_text=True)
    instance = db_session.get(Instance, instance_id)
    db_session.refresh(instance)
    assert instance.status == "completed"
    assert instance.vars["review"] == {"amount": 40.0}
    assert instance.nodes["approve"] == {"decision": "yes"}
    completed = [
        actor for kind, actor in kinds(db_session, instance_id) if kind == "task_completed"
    ]
    assert completed == ["alice", "alice"]
    page = alice.get(f"/inbox/tasks/{review.id}").get_data(as_text=True)
    assert "<dt>Amount</dt><dd>40</dd>" in page and 'id="task-form"' not in page


def test_after_the_last_task_of_an_instance_the_inbox_opens(users, flows, app, db_session):
    open_task(db_session, start_latest(app, "direct"))
    first = open_task(db_session, start_latest(app, "direct"))
    response = post(users("bob"), f"/inbox/tasks/{first.id}", {})
    assert response.headers["Location"] == INBOX, "another request's task is not forced on bob"


def test_a_task_completed_by_someone_else(users, flows, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    alice, bob = users("alice"), users("bob")
    bob.get(f"/inbox/tasks/{review.id}")
    assert post(alice, f"/inbox/tasks/{review.id}", {"amount": "5"}).status_code == 303
    late = post(bob, f"/inbox/tasks/{review.id}", {"amount": "6"})
    assert late.status_code == 409
    assert "This task was already completed by Alice Clerk" in late.get_data(as_text=True)
    fragment = post(bob, f"/inbox/tasks/{review.id}", {"amount": "6"}, headers=htmx("task-form"))
    text = fragment.get_data(as_text=True)
    assert fragment.status_code == 409 and text.lstrip().startswith('<div id="task-form"')
    assert task_of(db_session, review.id).result == {"amount": 5.0}


def test_a_double_submission_completes_once(users, flows, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    alice = users("alice")
    first = post(alice, f"/inbox/tasks/{review.id}", {"amount": "5"})
    second = post(alice, f"/inbox/tasks/{review.id}", {"amount": "5"})
    assert first.status_code == second.status_code == 303
    assert second.headers["Location"] == INBOX
    page = alice.get(INBOX).get_data(as_text=True)
    assert "You already completed this task" in page
    history = kinds(db_session, review.instance_id)
    assert history.count(("task_completed", "alice")) == 1
    assert len(db_session.scalars(select(Task).where(Task.node_id == "approve")).all()) == 1


def test_a_task_of_a_cancelled_instance(users, flows, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    alice = users("alice")
    assert alice.get(f"/inbox/tasks/{review.id}").status_code == 200
    cancel(app, review.instance_id, "sent twice")
    refused = post(alice, f"/inbox/tasks/{review.id}", {"amount": "5"})
    assert refused.status_code == 409
    assert (
        f"Instance {review.instance_id} was cancelled by operator (sent twice). "
        "This task is closed; nothing was saved."
    ) in refused.get_data(as_text=True)
    assert task_of(db_session, review.id).status == "cancelled"
    claim = post(alice, f"/inbox/tasks/{review.id}/claim")
    assert "was cancelled" in failed_page(alice, claim, f"/inbox/tasks/{review.id}", 409)
    assert ("task_completed", "alice") not in kinds(db_session, review.instance_id)


def test_a_task_completed_without_a_claim_becomes_the_completers(users, flows, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    post(users("bob"), f"/inbox/tasks/{review.id}", {"amount": "5"})
    done = task_of(db_session, review.id)
    bob = user_id(db_session, "bob")
    assert (done.status, done.assignee_id, done.completed_by_id) == ("completed", bob, bob)
    assert users("bob").get(f"/inbox/tasks/{review.id}").status_code == 200
    assert users("alice").get(f"/inbox/tasks/{review.id}").status_code == 404


def test_after_a_step_only_a_task_of_the_same_instance_comes_next(users, flows, app, db_session):
    """Done with an instance's last task for you: back to the list, not into another request."""
    other = start_latest(app, "expense", business_key="EXP-OTHER")
    other_review = open_task(db_session, other, "review")
    alice = users("alice")
    assert post(alice, f"/inbox/tasks/{other_review.id}", {"amount": "10"}).status_code == 303
    instance_id = start_latest(app, "expense", business_key="EXP-8")
    review = open_task(db_session, instance_id, "review")
    done = post(alice, f"/inbox/tasks/{review.id}", {"amount": "40"})
    approve = open_task(db_session, instance_id, "approve")
    assert done.headers["Location"] == f"/inbox/tasks/{approve.id}"
    finished = post(alice, f"/inbox/tasks/{approve.id}", {"decision": "yes"})
    assert finished.headers["Location"] == INBOX, "alice's open task of EXP-OTHER is not forced"


def test_starting_a_process_opens_the_starter_s_first_task(users, flows, app, db_session, demo):
    from tests.helpers.app import csrf_token

    alice = users("alice")
    page = "/inbox/processes/expense/start"
    started = alice.post(page, data={"csrf_token": csrf_token(alice, page)})
    assert started.status_code == 302
    instance = db_session.scalar(select(Instance).order_by(Instance.id.desc()))
    review = open_task(db_session, instance.id, "review")
    assert started.headers["Location"] == f"/inbox/tasks/{review.id}", "alice holds the clerk role"
    bob_started = users("operator").post(
        page, data={"csrf_token": csrf_token(users("operator"), page)}
    )
    assert bob_started.headers["Location"].startswith("/inbox/instances/"), "no task: the request"


def test_reassign_offers_the_users_who_hold_the_task_s_role(users, flows, app, db_session):
    review = open_task(db_session, start_latest(app, "expense", starter="alice"), "review")
    page = users("operator").get(f"/inbox/tasks/{review.id}").get_data(as_text=True)
    listed = page.split('<datalist id="eligible-users">')[1].split("</datalist>")[0]
    assert '<option value="bob">Bob Approver</option>' in listed
    assert 'value="alice"' not in listed, "the starter needs a confirmation"
    assert 'value="admin"' not in listed and 'value="operator"' not in listed
    assert 'list="eligible-users"' in page


@pytest.mark.parametrize(
    ("username", "concern", "message"),
    [
        ("admin", "no_role", "Ada Admin does not hold the role clerk."),
        ("alice", "starter", "Alice Clerk started instance"),
    ],
)
def test_reassign_outside_the_role_or_to_the_starter_asks_first(
    users, flows, app, db_session, username, concern, message
):
    review = open_task(db_session, start_latest(app, "expense", starter="alice"), "review")
    operator = users("operator")
    url = f"/inbox/tasks/{review.id}/reassign"
    asked = post(operator, url, {"username": username, "note": "cover"})
    page = asked.get_data(as_text=True)
    assert asked.status_code == 200 and message in page
    assert f'name="confirmed" type="hidden" value="{concern}"' in page
    assert f'action="{url}"' in page and 'name="note" value="cover"' in page
    assert task_of(db_session, review.id).assignee_id is None, "nothing changes before the yes"
    assert details(db_session, review.instance_id, "task_reassigned") == []

    wrong = post(operator, url, {"username": username, "confirmed": "other"})
    assert wrong.status_code == 200 and message in wrong.get_data(as_text=True)
    done = post(operator, url, {"username": username, "note": "cover", "confirmed": concern})
    assert done.status_code == 303
    assert task_of(db_session, review.id).assignee_id == user_id(db_session, username)
    assert details(db_session, review.instance_id, "task_reassigned") == [
        {"actor": "operator", "node": "review", "task": review.id, "to_user": username,
         "from_role": "clerk", "note": "cover", "confirmed": concern},
    ]  # fmt: skip


def test_the_task_breadcrumb_never_leads_to_a_403(users, flows, app, db_session):
    review = open_task(db_session, start_latest(app, "expense"), "review")
    operator_page = users("operator").get(f"/inbox/tasks/{review.id}").get_data(as_text=True)
    crumbs = operator_page.split('<p class="crumbs">')[1].split("</p>")[0]
    assert 'href="/inbox/"' not in crumbs
    assert f'href="/operations/instances/{review.instance_id}"' in crumbs
    assert users("operator").get("/inbox/").status_code == 403
    alice_page = users("alice").get(f"/inbox/tasks/{review.id}").get_data(as_text=True)
    assert '<p class="crumbs"><a href="/inbox/">Inbox</a></p>' in alice_page


def test_moving_on_to_several_tasks_of_one_title_says_how_many(users, app, demo, db_session):
    from tests.helpers.documents import chain
    from tests.helpers.inbox import user_task
    from tests.helpers.processes import publish_document

    with app.app_context():
        publish_document(
            chain(
                ("prepare", user_task("Prepare", "role", "clerk")),
                (
                    "review",
                    user_task(
                        "Review offer", "role", "clerk", multiInstance={"collection": "[1, 2]"}
                    ),
                ),
            ),
            key="offers",
        )
    instance_id = start_latest(app, "offers")
    prepare = open_task(db_session, instance_id, "prepare")
    alice = users("alice")
    done = post(alice, f"/inbox/tasks/{prepare.id}", {})
    page = alice.get(done.headers["Location"]).get_data(as_text=True)
    assert f"Instance {instance_id} moved on to: Review offer (2 tasks)." in page
    assert "Review offer, Review offer" not in page
