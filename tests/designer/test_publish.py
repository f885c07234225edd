"""Publishing: only without errors, with a change note, never an unchanged draft, never stale."""

from sqlalchemy import select

from tests.helpers.designer import get_process, publish, token, versions
from tests.helpers.documents import approval_document
from webapp.models import User
from webapp.process import document as documents
from webapp.process.bpmn import import_bpmn


def test_publish_creates_an_immutable_numbered_version(designer, make_process, db_session):
    pid = make_process(doc=approval_document())
    page = designer.get(f"/designer/{pid}/publish").get_data(as_text=True)
    assert "Publish version 1" in page
    response = publish(designer, pid, note="  First version  ")
    assert response.status_code == 302
    assert response.headers["Location"] == f"/designer/{pid}/versions"
    [version] = versions(db_session, pid)
    process = get_process(db_session, pid)
    assert version.number == 1
    assert version.change_note == "First version"
    assert version.document == process.draft_document
    assert version.content_hash == documents.content_hash(process.draft_document)
    assert import_bpmn(version.bpmn_xml).document == version.document
    assert version.published_by_id == db_session.scalar(
        select(User.id).where(User.username == "designer")
    )
    assert version.published_at is not None
    assert "Published version 1" in designer.get(f"/designer/{pid}/versions").get_data(as_text=True)


def test_an_unchanged_draft_is_refused_with_nothing_changed(designer, make_process, db_session):
    pid = make_process(doc=approval_document())
    assert publish(designer, pid).status_code == 302
    response = publish(designer, pid, note="Again")
    assert response.status_code == 422
    assert "Nothing changed since version 1" in response.get_data(as_text=True)
    assert len(versions(db_session, pid)) == 1


def test_a_draft_with_errors_cannot_be_published(designer, make_process, db_session):
    doc = approval_document()
    doc["nodes"]["review"]["config"]["assignee"] = {"type": "role", "value": "no-such-role"}
    pid = make_process(doc=doc)
    page = designer.get(f"/designer/{pid}/publish").get_data(as_text=True)
    assert "The draft has errors" in page and "which is not a Flowdesk role" in page
    assert "Publish version 1</button>" not in page
    response = publish(designer, pid)
    assert response.status_code == 422
    assert "fix them before publishing" in response.get_data(as_text=True)
    assert versions(db_session, pid) == []


def test_a_change_note_is_required(designer, make_process, db_session):
    pid = make_process(doc=approval_document())
    response = publish(designer, pid, note="   ")
    assert response.status_code == 422
    assert "Say in a few words what changed." in response.get_data(as_text=True)
    assert versions(db_session, pid) == []


def test_publishing_a_draft_that_changed_since_the_page_loaded_gets_409(
    designer, make_process, db_session
):
    pid = make_process(doc=approval_document())
    response = publish(designer, pid, revision=0)
    assert response.status_code == 409
    assert "saved by someone else" in response.get_data(as_text=True)
    assert versions(db_session, pid) == []


def test_publishing_needs_the_publish_permission(make_process, user_with, db_session):
    pid = make_process(doc=approval_document())
    editor = user_with(["processes.edit"], ["finance"])
    assert editor.get(f"/designer/{pid}/publish").status_code == 403
    csrf = token(editor, f"/designer/{pid}/")
    response = editor.post(
        f"/designer/{pid}/publish", data={"csrf_token": csrf, "note": "x", "revision": 1}
    )
    assert response.status_code == 403
    assert "Publish…" not in editor.get(f"/designer/{pid}/").get_data(as_text=True)
    outsider = user_with(["processes.edit", "processes.publish"], ["hr"])
    assert outsider.get(f"/designer/{pid}/publish").status_code == 404
    assert versions(db_session, pid) == []


def test_htmx_publish_redirects_with_hx_redirect(designer, make_process):
    pid = make_process(doc=approval_document())
    response = publish(designer, pid, **{"HX-Request": "true"})
    assert response.status_code == 204
    assert response.headers["HX-Redirect"] == f"/designer/{pid}/versions"


def test_an_unchanged_draft_says_so_before_anyone_submits(designer, make_process):
    pid = make_process(doc=approval_document())
    assert publish(designer, pid).status_code == 302
    page = designer.get(f"/designer/{pid}/publish").get_data(as_text=True)
    assert "the draft is the same as version 1" in page
    assert "Publish version 2" not in page
    assert f'action="/designer/{pid}/publish"' not in page
