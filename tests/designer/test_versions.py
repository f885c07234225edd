"""Versions: the list, a read-only view, exports, and comparing two versions."""

import json

import pytest

from tests.helpers.designer import get_process
from tests.helpers.documents import approval_document
from webapp.process.bpmn import import_bpmn
from webapp.services import processes


@pytest.fixture
def two_versions(make_process, db_session):
    pid = make_process(doc=approval_document())
    process = get_process(db_session, pid)
    processes.publish(process, actor=None, note="one")
    db_session.commit()
    doc = approval_document(key=process.key, name=process.name)
    doc["nodes"]["review"]["title"] = "Review carefully"
    doc["nodes"]["review"]["config"]["dueIn"] = "P1D"
    del doc["nodes"]["rejected"]
    del doc["flows"]["f4"]
    doc["nodes"]["archive"] = {
        "kind": "endEvent",
        "title": "Archived",
        "position": {"x": 480, "y": 300},
    }
    doc["flows"]["f5"] = {"source": "ok", "target": "archive", "default": True}
    doc["nodes"]["done"]["position"] = {"x": 600, "y": 100}
    process = get_process(db_session, pid)
    processes.save_draft(process, doc, base_revision=process.draft_revision, actor=None)
    processes.publish(process, actor=None, note="two")
    db_session.commit()
    return pid


def test_versions_are_listed_newest_first_with_links(designer, two_versions):
    page = designer.get(f"/designer/{two_versions}/versions").get_data(as_text=True)
    assert page.index(">v2<") < page.index(">v1<")
    assert "The draft is the same as v2" in page
    assert f"/designer/{two_versions}/compare?a=1&amp;b=2" in page
    assert f"/designer/{two_versions}/versions/1.bpmn" in page


def test_a_version_is_viewed_read_only(designer, two_versions):
    page = designer.get(f"/designer/{two_versions}/versions/1").get_data(as_text=True)
    assert "bpmn-navigated-viewer.production.min.js" in page
    assert "bpmn-modeler" not in page
    assert "Read-only" in page and "rejected" in page
    assert designer.get(f"/designer/{two_versions}/versions/9").status_code == 404


def test_versions_export_as_bpmn_and_json(designer, two_versions, db_session):
    bpmn = designer.get(f"/designer/{two_versions}/versions/1.bpmn")
    assert bpmn.headers["Content-Disposition"] == 'attachment; filename="invoice-v1.bpmn"'
    doc = json.loads(designer.get(f"/designer/{two_versions}/versions/1.json").get_data())
    assert import_bpmn(bpmn.get_data()).document == doc
    assert "rejected" in doc["nodes"]
    draft = designer.get(f"/designer/{two_versions}/draft.json")
    assert draft.headers["Content-Disposition"] == 'attachment; filename="invoice-draft.json"'
    assert json.loads(draft.get_data()) == get_process(db_session, two_versions).draft_document
    assert designer.get(f"/designer/{two_versions}/draft.bpmn").mimetype == "application/xml"


def test_compare_lists_and_colours_what_changed(designer, two_versions):
    page = designer.get(f"/designer/{two_versions}/compare?a=1&b=2").get_data(as_text=True)
    assert "2 added, 2 removed, 1 changed, 1 only moved" in page
    assert 'data-element="archive" data-status="added"' in page
    assert 'data-element="rejected" data-status="removed"' in page
    assert 'data-element="f4" data-status="removed"' in page
    assert 'data-element="review" data-status="changed"' in page
    assert 'data-element="done" data-status="moved"' in page
    assert "config.dueIn" in page and "Review carefully" in page
    old = json.loads(page.split('id="old-diagram">')[1].split("</script>")[0])
    new = json.loads(page.split('id="new-diagram">')[1].split("</script>")[0])
    assert old["marks"] == {
        "rejected": "removed",
        "review": "changed",
        "done": "moved",
        "f4": "removed",
    }
    assert new["marks"] == {"archive": "added", "review": "changed", "done": "moved", "f5": "added"}
    default = designer.get(f"/designer/{two_versions}/compare").get_data(as_text=True)
    assert "From v1 to v2" in default


def test_compare_names_settings_in_words_with_the_path_as_detail(designer, two_versions):
    page = designer.get(f"/designer/{two_versions}/compare?a=1&b=2").get_data(as_text=True)
    assert '<td>Due in <span class="hint"><code>config.dueIn</code></span></td>' in page
    assert "<td>Title</td>" in page
    assert "Flow OK? → Archived" in page, "flows by the titles of their ends"


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("config.dueIn", "Due in"),
        ("config.saveTo", "Save result as"),
        ("config.form[2].label", "Form field 2 label"),
        ("config.inputs.amountDue", "Input amountDue"),
        ("config.assignee.value", "Assignee"),
        ("config.correlationKey", "Correlation key"),
        ("outgoing flow order", "Outgoing flow order"),
        ("config.someNewSetting", "Some new setting"),
    ],
)
def test_change_paths_read_as_words(path, label):
    from webapp.process.diff import path_label

    assert path_label(path) == label


def test_compare_needs_two_versions_and_existing_numbers(designer, make_process, two_versions):
    single = make_process("single")
    assert "needs two published versions" in designer.get(f"/designer/{single}/compare").get_data(
        as_text=True
    )
    assert designer.get(f"/designer/{two_versions}/compare?a=1&b=7").status_code == 404


def test_versions_of_another_partition_are_404(user_with, two_versions):
    outsider = user_with(["processes.edit"], ["hr"])
    for path in ("versions", "versions/1", "versions/1.bpmn", "versions/1.json", "compare"):
        assert outsider.get(f"/designer/{two_versions}/{path}").status_code == 404, path
