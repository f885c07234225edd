"""The outline's process settings: the process variables pool checkbox saves to the draft, shows
its state, survives a canvas save, and a stale form changes nothing."""

from tests.helpers.designer import get_process, post_edit, save_xml
from tests.helpers.documents import approval_document
from webapp.designer.editor import draft_xml

LABEL = "Process variables pool (as in Camunda, Flowable, SpiffWorkflow)"


def _checkbox(page: str) -> str:
    start = page.index('id="variables_pool"')
    return page[page.rindex("<input", 0, start) : page.index(">", start)]


def test_the_checkbox_turns_the_pool_on_and_off(designer, make_process, db_session):
    doc = approval_document()
    del doc["nodes"]["review"]["config"]["saveTo"]
    doc["flows"]["f3"]["condition"] = "$vars.approved == true"
    pid = make_process(doc=doc)
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    assert LABEL in page and "checked" not in _checkbox(page)
    panel = designer.get(f"/designer/{pid}/panel").get_data(as_text=True)
    assert "SpiffWorkflow): <strong>off</strong>" in " ".join(panel.split())
    codes = {p["code"]: p["severity"] for p in get_process(db_session, pid).draft_problems}
    assert codes["expression.reference"] == "error"

    response = post_edit(designer, f"/designer/{pid}/outline/settings", variables_pool="y")
    assert response.status_code == 302
    process = get_process(db_session, pid)
    assert process.draft_document["variables"] == "pool"
    assert process.draft_revision == 2
    # The review's form has the field `approved`: in the pool it provides `$vars.approved`.
    assert "expression.reference" not in {p["code"] for p in process.draft_problems}
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    assert "checked" in _checkbox(page)
    # The diagram's properties panel, with nothing selected, says so and links to the setting.
    panel = designer.get(f"/designer/{pid}/panel").get_data(as_text=True)
    assert "SpiffWorkflow): <strong>on</strong>" in " ".join(panel.split())
    assert f"/designer/{pid}/outline#settings-title" in panel

    # The canvas saves the XML it was given: the setting travels in it.
    db_session.expire_all()
    xml = draft_xml(get_process(db_session, pid))
    assert save_xml(designer, pid, xml, revision=2).status_code == 200
    assert get_process(db_session, pid).draft_document["variables"] == "pool"

    assert post_edit(designer, f"/designer/{pid}/outline/settings", revision=3).status_code == 302
    assert "variables" not in get_process(db_session, pid).draft_document
    db_session.expire_all()
    xml = draft_xml(get_process(db_session, pid))
    assert save_xml(designer, pid, xml, revision=4).status_code == 200
    assert "variables" not in get_process(db_session, pid).draft_document


def test_a_stale_settings_form_gets_409_and_changes_nothing(designer, make_process, db_session):
    pid = make_process(doc=approval_document())
    post_edit(designer, f"/designer/{pid}/outline/nodes/review/rename", title="Check")
    response = post_edit(designer, f"/designer/{pid}/outline/settings", variables_pool="y")
    assert response.status_code == 409
    assert "variables" not in get_process(db_session, pid).draft_document
