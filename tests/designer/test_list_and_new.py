"""The processes list (partition-scoped, searchable, paginated) and creating a process."""

from sqlalchemy import select

from tests.helpers.designer import get_process, token
from tests.helpers.documents import approval_document
from webapp.models import Partition, Process, User
from webapp.services import processes


def test_list_shows_only_processes_the_user_may_see(make_process, user_with):
    make_process("finance-flow", "finance")
    make_process("hr-flow", "hr")
    make_process("open-flow", None)
    client = user_with(["processes.edit"], ["finance"])
    page = client.get("/designer/").get_data(as_text=True)
    assert "finance-flow" in page and "open-flow" in page
    assert "hr-flow" not in page


def test_list_says_which_version_is_published_and_whether_the_draft_differs(
    designer, make_process, db_session
):
    pid = make_process("invoice", doc=approval_document())
    make_process("fresh")
    process = get_process(db_session, pid)
    processes.publish(process, actor=None, note="v1")
    db_session.commit()
    page = designer.get("/designer/").get_data(as_text=True)
    assert "same as v1" in page and "not published" in page
    process = get_process(db_session, pid)
    doc = dict(process.draft_document, nodes={**process.draft_document["nodes"]})
    doc["nodes"]["review"] = {**doc["nodes"]["review"], "title": "Review again"}
    processes.save_draft(process, doc, base_revision=process.draft_revision, actor=None)
    db_session.commit()
    page = designer.get("/designer/").get_data(as_text=True)
    assert "changed since v1" in page
    assert "Dana Designer" in page


def test_search_filters_by_key_or_name_and_answers_htmx_with_the_table(designer, make_process):
    make_process("invoice-approval")
    make_process("leave-request")
    response = designer.get(
        "/designer/?q=leave", headers={"HX-Request": "true", "HX-Target": "div#process-table"}
    )
    html = response.get_data(as_text=True)
    assert "leave-request" in html and "invoice-approval" not in html
    assert "<html" not in html
    assert "No processes match" in designer.get("/designer/?q=nothing").get_data(as_text=True)


def test_list_paginates(designer, make_process):
    for n in range(27):
        make_process(f"p{n:02d}")
    first = designer.get("/designer/").get_data(as_text=True)
    second = designer.get("/designer/?page=2").get_data(as_text=True)
    assert "Page 1 of 2 (27)" in first
    assert second.count("<tr>") - 1 == 2


def test_new_process_opens_the_designer(designer, db_session, demo):
    finance = db_session.scalar(select(Partition).where(Partition.key == "finance"))
    response = designer.post(
        "/designer/new",
        data={
            "csrf_token": token(designer),
            "key": "claims",
            "name": "Claims",
            "partition": finance.id,
        },
    )
    process = db_session.scalar(select(Process).where(Process.key == "claims"))
    assert response.status_code == 302
    assert response.headers["Location"] == f"/designer/{process.id}/"
    assert process.partition_id == finance.id
    assert process.draft_revision == 1
    assert set(process.draft_document["nodes"]) == {"start", "end"}
    assert process.created_by_id == db_session.scalar(
        select(User.id).where(User.username == "designer")
    )


def test_new_process_bad_input_is_refused_with_messages(designer, make_process, db_session):
    make_process("taken")
    hr = db_session.scalar(select(Partition.id).where(Partition.key == "hr"))
    csrf = token(designer)
    cases = [
        ({"key": "taken", "name": "X", "partition": hr}, "exists"),
        ({"key": "1bad key", "name": "X", "partition": hr}, "starting with a letter"),
        ({"key": "ok", "name": "", "partition": hr}, "This field is required"),
        ({"key": "ok", "name": "X", "partition": "999"}, "Not a valid choice"),
    ]
    for data, message in cases:
        response = designer.post("/designer/new", data={"csrf_token": csrf, **data})
        assert response.status_code == 422, data
        assert message in response.get_data(as_text=True), data
    assert db_session.scalar(select(Process).where(Process.key == "ok")) is None


def test_a_modeller_cannot_create_in_a_partition_they_are_not_in(user_with, db_session):
    client = user_with(["processes.edit"], ["finance"])
    hr = db_session.scalar(select(Partition.id).where(Partition.key == "hr"))
    response = client.post(
        "/designer/new",
        data={"csrf_token": token(client), "key": "sneaky", "name": "S", "partition": hr},
    )
    assert response.status_code == 422
    assert db_session.scalar(select(Process).where(Process.key == "sneaky")) is None


def test_people_without_the_permission_get_403(login_as, make_process):
    pid = make_process()
    client = login_as("alice")
    for path in ("/designer/", "/designer/new", f"/designer/{pid}/", f"/designer/{pid}/outline"):
        assert client.get(path).status_code == 403, path
    csrf = {"X-CSRFToken": token(client, "/")}
    assert client.post(f"/designer/{pid}/save", data="x", headers=csrf).status_code == 403
