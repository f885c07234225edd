"""My requests: the instances a person started, where each is now, or how it ended."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.app import csrf_token
from tests.helpers.documents import chain
from tests.helpers.inbox import open_task, post, user_task
from tests.helpers.processes import publish_document
from webapp.models import Instance


def _start(client, key: str, business_key: str) -> None:
    page = f"/inbox/processes/{key}/start"
    data = {"csrf_token": csrf_token(client, page), "business_key": business_key}
    assert client.post(page, data=data).status_code == 302


def test_my_requests_show_where_each_is_and_how_it_ended(users, flows, app, db_session):
    alice, operator = users("alice"), users("operator")
    _start(operator, "expense", "EXP-A")
    _start(operator, "expense", "EXP-B")
    _start(alice, "expense", "EXP-ALICE")
    from sqlalchemy import select

    from webapp.models import Instance

    done_id = db_session.scalar(select(Instance.id).where(Instance.business_key == "EXP-B"))
    review = open_task(db_session, done_id, "review")
    assert post(alice, f"/inbox/tasks/{review.id}", {"amount": "30"}).status_code == 303
    approve = open_task(db_session, done_id, "approve")
    assert post(alice, f"/inbox/tasks/{approve.id}", {"decision": "yes"}).status_code == 303

    page = operator.get("/inbox/requests").get_data(as_text=True)
    rows = page.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    assert [("EXP-B" in r, "EXP-A" in r) for r in rows] == [(True, False), (False, True)]
    assert "EXP-ALICE" not in page, "only what this person started"
    finished, waiting = rows
    assert "completed" in finished and "Ended: " in finished and "Decision: Approve" in finished
    assert "running" in waiting and ">Review expense</a>" in waiting and "(role clerk)" in waiting
    assert 'href="/inbox/requests"' in operator.get("/inbox/processes").get_data(as_text=True)


def test_my_requests_need_the_start_permission(users, flows, user_with):
    assert users("designer").get("/inbox/requests").status_code == 200
    assert user_with(["tasks.work"]).get("/inbox/requests").status_code == 403
    empty = users("bob").get("/inbox/requests").get_data(as_text=True)
    assert "You have not started anything yet." in empty


def test_a_requester_gets_links_only_to_the_tasks_they_may_open(users, flows, app, db_session):
    """alice (clerk) starts "fin": its task is for the approver role, which she lacks. My
    requests and the request's page name it without a link (it would be "Not found"), while her
    own clerk task of "expense" is linked, and opens."""
    alice = users("alice")
    _start(alice, "fin", "FIN-1")
    _start(alice, "expense", "EXP-1")
    from sqlalchemy import select

    from webapp.models import Instance

    fin_id = db_session.scalar(select(Instance.id).where(Instance.business_key == "FIN-1"))
    exp_id = db_session.scalar(select(Instance.id).where(Instance.business_key == "EXP-1"))
    check = open_task(db_session, fin_id, "check")
    review = open_task(db_session, exp_id, "review")
    assert alice.get(f"/inbox/tasks/{check.id}").status_code == 404, "not hers to open"

    for page in (
        alice.get("/inbox/requests").get_data(as_text=True),
        alice.get(f"/inbox/instances/{fin_id}").get_data(as_text=True),
    ):
        assert "Check invoice" in page, "she still sees where her request is"
        assert f'href="/inbox/tasks/{check.id}"' not in page
    links = [
        alice.get("/inbox/requests").get_data(as_text=True),
        alice.get(f"/inbox/instances/{exp_id}").get_data(as_text=True),
    ]
    assert all(f'href="/inbox/tasks/{review.id}"' in page for page in links)
    assert alice.get(f"/inbox/tasks/{review.id}").status_code == 200

    # Once bob (approver) claims it, the task is his; the requests page says who holds it.
    assert post(users("bob"), f"/inbox/tasks/{check.id}/claim").status_code == 303
    page = alice.get("/inbox/requests").get_data(as_text=True)
    assert "Check invoice" in page and f'href="/inbox/tasks/{check.id}"' not in page
    assert "(Bob" in page or "(bob" in page.lower()


def test_the_requesters_page_shows_the_steps_a_person_recognises(users, flows, app, db_session):
    import re

    from sqlalchemy import select

    from webapp.models import Instance, User

    alice = users("alice")
    _start(alice, "expense", "EXP-S")
    instance_id = db_session.scalar(select(Instance.id).where(Instance.business_key == "EXP-S"))
    review = open_task(db_session, instance_id, "review")
    assert post(alice, f"/inbox/tasks/{review.id}", {"amount": "30"}).status_code == 303
    page = alice.get(f"/inbox/instances/{instance_id}").get_data(as_text=True)
    steps = page.split('id="instance-history"')[1].split("</table>")[0]
    name = db_session.scalar(select(User).where(User.username == "alice")).name
    rows = [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in row.split("<td>")[2:]]
        for row in steps.split("<tr data-kind=")[1:]
    ]
    assert rows == [
        ["Started", name],
        ["Waiting for Review expense", ""],
        ["Review expense done", name],
        ["Waiting for Approve expense", ""],
    ]
    assert "Every engine step" not in page, "alice may not read instances: no operations link"
    where = page.split('id="instance-where"')[1].split("</div>")[0]
    assert "Waiting for" in where and "Approve expense" in where
    for engine_word in ("entered", "left", "tool attempt", "(active)", "(waiting)"):
        assert engine_word not in page

    approve = open_task(db_session, instance_id, "approve")
    assert post(alice, f"/inbox/tasks/{approve.id}", {"decision": "yes"}).status_code == 303
    page = alice.get(f"/inbox/instances/{instance_id}").get_data(as_text=True)
    assert page.split('id="instance-history"')[1].count('data-kind="completed"') == 1
    assert "Approve expense done" in page and ">Completed<" in page
    operator = users("operator").get(f"/inbox/instances/{instance_id}").get_data(as_text=True)
    assert f'href="/operations/instances/{instance_id}"' in operator


def test_a_failed_request_reads_plainly_for_its_requester(users, app, demo, db_session):
    """alice's request stops at an error end nothing catches: she reads where it stopped, not
    the engine's message; an operator on the same page gets the message. Her own finished task
    shows her answers by their labels, and links back to her request."""
    from sqlalchemy import select

    from tests.helpers.documents import document, flow, node
    from tests.helpers.inbox import DECISION, user_task
    from tests.helpers.processes import publish_document
    from webapp.models import Instance

    nodes = {
        "start": node("startEvent"),
        "pay": user_task("Pay", "role", "clerk", DECISION),
        "boom": node("endEvent", "Payment refused", event="error", code="refused"),
    }
    with app.app_context():
        publish_document(
            document(nodes, {"f1": flow("start", "pay"), "f2": flow("pay", "boom")}), key="boom"
        )
    alice = users("alice")
    _start(alice, "boom", "BOOM-1")
    instance_id = db_session.scalar(select(Instance.id).where(Instance.business_key == "BOOM-1"))
    pay = open_task(db_session, instance_id, "pay")
    assert post(alice, f"/inbox/tasks/{pay.id}", {"decision": "no"}).status_code == 303
    db_session.expire_all()
    assert db_session.get(Instance, instance_id).status == "failed"

    page = alice.get(f"/inbox/instances/{instance_id}").get_data(as_text=True)
    assert "Failed at Payment refused. It stopped with an error" in page
    assert "was thrown and nothing caught it" not in page
    assert "Stopped with an error at Payment refused" in page.split('id="instance-history"')[1]
    operator = users("operator").get(f"/inbox/instances/{instance_id}").get_data(as_text=True)
    assert "was thrown and nothing caught it" in operator

    done = alice.get(f"/inbox/tasks/{pay.id}").get_data(as_text=True)
    submitted = done.split('id="result-heading"')[1].split("</section>")[0]
    assert "<dt>Decision</dt><dd>Reject</dd>" in submitted, "the option's label, not 'no'"
    assert f'href="/inbox/instances/{instance_id}"' in done, "the requester's own request"


def test_a_requester_reads_an_untitled_step_by_its_kind_not_its_id(users, app, demo, db_session):
    with app.app_context():
        publish_document(chain(("Activity_0x7q2lm", user_task("", "user", "bob"))), key="untitled")
    alice = users("alice")
    _start(alice, "untitled", "UNT-1")
    instance_id = db_session.scalar(select(Instance.id).where(Instance.business_key == "UNT-1"))
    page = alice.get(f"/inbox/instances/{instance_id}").get_data(as_text=True)
    assert "Activity_0x7q2lm" not in page
    where = page.split('id="instance-where"')[1].split("</div>")[0]
    assert "user task" in where.lower()


def test_a_requester_reads_to_whom_a_task_was_handed_by_name(users, flows, db_session):
    alice, operator = users("alice"), users("operator")
    _start(alice, "expense", "EXP-H")
    instance_id = db_session.scalar(select(Instance.id).where(Instance.business_key == "EXP-H"))
    review = open_task(db_session, instance_id, "review")
    handed = post(operator, f"/inbox/tasks/{review.id}/reassign", {"username": "bob"})
    assert handed.status_code == 303
    steps = alice.get(f"/inbox/instances/{instance_id}").get_data(as_text=True)
    steps = steps.split('id="instance-history"')[1].split("</table>")[0]
    assert "Review expense handed to Bob Approver" in steps
