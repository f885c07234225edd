"""Decision pages over HTTP: list, import, the table editor's posts, try it, example rows,
publish, compare and export; partitions and permissions; refusals are 4xx and write nothing."""

from __future__ import annotations

import io
import re

from sqlalchemy import func, select

from tests.helpers.decisions import DISCOUNT_DMN
from tests.helpers.designer import finance, token
from webapp.models import DecisionModel, DecisionVersion

HTMX = {"HX-Request": "true"}


def _upload(client, path: str, content: bytes, **data):
    body = {"csrf_token": token(client, path), "file": (io.BytesIO(content), "pricing.dmn"), **data}
    return client.post(path, data=body, content_type="multipart/form-data")


def _edit(client, model_id: int, revision: int, **data):
    csrf = token(client, f"/designer/decisions/{model_id}")
    return client.post(
        f"/designer/decisions/{model_id}/edit",
        data={"decision": "discount", "revision": revision, **data},
        headers={"X-CSRFToken": csrf, **HTMX},
    )


def _model(db_session, model_id: int) -> DecisionModel:
    db_session.expire_all()
    return db_session.get(DecisionModel, model_id)


def test_import_page_creates_the_model_and_reports(login_as, db_session):
    designer = login_as("designer")
    response = _upload(
        designer, "/designer/decisions/import", DISCOUNT_DMN.encode(), partition=finance(db_session)
    )
    assert response.status_code == 302
    model = db_session.scalar(select(DecisionModel).where(DecisionModel.key == "pricing"))
    assert response.headers["Location"] == f"/designer/decisions/{model.id}/report"
    page = designer.get(response.headers["Location"]).get_data(as_text=True)
    assert "Imported Pricing: no problems." in page
    assert "The file imported without problems." in page


def test_import_page_names_an_untranslatable_entry_and_its_rule(login_as, db_session):
    designer = login_as("designer")
    bad = DISCOUNT_DMN.replace("&lt; 100", "&lt; &lt; 100").encode()
    response = _upload(designer, "/designer/decisions/import", bad, partition=finance(db_session))
    page = designer.get(response.headers["Location"]).get_data(as_text=True)
    assert "Blocks publish" in page
    assert re.search(r"rule 1, input column &#39;Amount&#39;", page)


def test_unreadable_upload_is_a_422_naming_the_line_and_writes_nothing(login_as, db_session):
    designer = login_as("designer")
    response = _upload(
        designer,
        "/designer/decisions/import",
        b"<definitions>\n<a></b>",
        partition=finance(db_session),
    )
    assert response.status_code == 422
    assert "line 2" in response.get_data(as_text=True)
    assert db_session.scalar(select(func.count(DecisionModel.id))) == 0


def test_list_filters_and_keeps_partitions_apart(login_as, user_with, import_model):
    finance_id = import_model()
    import_model(key="hr-rules", partition="hr")
    designer = login_as("designer")
    page = designer.get("/designer/decisions/").get_data(as_text=True)
    assert "pricing" in page and "hr-rules" in page
    searched = designer.get("/designer/decisions/?q=hr-").get_data(as_text=True)
    assert "hr-rules" in searched and ">pricing<" not in searched
    hr_only = user_with(["processes.edit"], ["hr"])
    page = hr_only.get("/designer/decisions/").get_data(as_text=True)
    assert "hr-rules" in page and ">pricing<" not in page
    assert hr_only.get(f"/designer/decisions/{finance_id}").status_code == 404
    assert hr_only.get(f"/designer/decisions/{finance_id}/export").status_code == 404


def test_users_without_modelling_rights_get_403(login_as):
    operator = login_as("operator")
    assert operator.get("/designer/decisions/").status_code == 403


def test_editor_labels_every_cell(login_as, import_model):
    model_id = import_model()
    page = login_as("designer").get(f"/designer/decisions/{model_id}").get_data(as_text=True)
    assert 'aria-label="Rule 2, Tier"' in page
    assert 'aria-label="Rule 3, Rate (output)"' in page
    assert 'aria-label="Rule 1, description"' in page
    assert 'value="&#34;gold&#34;"' in page


def test_cell_edit_saves_and_answers_with_the_problems_only(login_as, db_session, import_model):
    model_id = import_model()
    designer = login_as("designer")
    response = _edit(designer, model_id, 1, edit="cell", rule=0, side="input", column=0, text="<<")
    body = response.get_data(as_text=True)
    assert response.status_code == 200
    assert 'id="editor-status"' in body and 'id="decision-editor"' not in body
    assert 'value="2"' in body  # the new revision
    assert "Blocks publish" in body and "rule 1" in body
    assert (
        'id="cell-flag-0-input-0" class="cell-flag" hx-swap-oob="true"><span class="cell-problem">'
        in body
    )
    assert (
        _model(db_session, model_id).draft_document["decisions"][0]["table"]["rules"][0]["inputs"][
            0
        ]["text"]
        == "<<"
    )


def test_stale_and_bad_edits_are_refused_and_change_nothing(login_as, db_session, import_model):
    model_id = import_model()
    designer = login_as("designer")
    stale = _edit(designer, model_id, 7, edit="add-rule")
    assert stale.status_code == 409
    assert "saved by someone else" in stale.get_data(as_text=True)
    bad = _edit(designer, model_id, 1, edit="hit-policy", hit_policy="SOMETIMES")
    assert bad.status_code == 422
    assert "Hit policy must be one of" in bad.get_data(as_text=True)
    model = _model(db_session, model_id)
    assert model.draft_revision == 1
    assert model.draft_document["decisions"][0]["table"]["hitPolicy"] == "UNIQUE"


def test_structure_edit_redraws_the_table(login_as, db_session, import_model):
    model_id = import_model()
    response = _edit(login_as("designer"), model_id, 1, edit="add-rule")
    body = response.get_data(as_text=True)
    assert response.status_code == 200
    assert 'id="decision-editor"' in body and 'aria-label="Rule 4, Amount"' in body


def test_try_it_shows_the_matched_rule_and_result(login_as, import_model):
    model_id = import_model()
    designer = login_as("designer")
    csrf = token(designer, f"/designer/decisions/{model_id}/test")
    response = designer.post(
        f"/designer/decisions/{model_id}/try?decision=discount",
        data={"csrf_token": csrf, "amount": "150", "tier": "silver"},
    )
    body = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "Matched rule 3." in body
    assert '<tr class="matched" id="try-rule-3">' in body
    refused = designer.post(
        f"/designer/decisions/{model_id}/try?decision=discount",
        data={"csrf_token": csrf, "amount": "lots", "tier": "silver"},
    )
    assert refused.status_code == 422
    assert "Amount: &#39;lots&#39; is not a number." in refused.get_data(as_text=True)


def test_example_rows_are_added_run_and_gate_publish(login_as, db_session, import_model):
    model_id = import_model()
    designer = login_as("designer")
    csrf = token(designer, f"/designer/decisions/{model_id}/test")
    response = designer.post(
        f"/designer/decisions/{model_id}/examples?decision=discount",
        data={
            "csrf_token": csrf,
            "revision": 1,
            "amount": "150",
            "tier": "gold",
            "expected": "11",
            "name": "gold order",
        },
    )
    assert response.status_code == 302
    page = designer.get(f"/designer/decisions/{model_id}/test").get_data(as_text=True)
    assert "gold order" in page and "fails" in page
    publish = designer.post(
        f"/designer/decisions/{model_id}/publish",
        data={"csrf_token": csrf, "revision": 2, "note": "first"},
    )
    body = publish.get_data(as_text=True)
    assert publish.status_code == 422
    assert "Example rows fail on this draft: gold order." in body
    assert db_session.scalar(select(func.count(DecisionVersion.id))) == 0


def test_publish_compare_and_export(login_as, db_session, import_model):
    model_id = import_model()
    designer = login_as("designer")
    csrf = token(designer, f"/designer/decisions/{model_id}/versions")
    first = designer.post(
        f"/designer/decisions/{model_id}/publish",
        data={"csrf_token": csrf, "revision": 1, "note": "first"},
    )
    assert first.status_code == 302
    _edit(designer, model_id, 1, edit="hit-policy", hit_policy="FIRST")
    second = designer.post(
        f"/designer/decisions/{model_id}/publish",
        data={"csrf_token": csrf, "revision": 2, "note": "first wins"},
    )
    assert second.status_code == 302
    page = designer.get(f"/designer/decisions/{model_id}/compare?old=1&new=2").get_data(
        as_text=True
    )
    assert "hit policy" in page and "UNIQUE → FIRST" in page
    exported = designer.get(f"/designer/decisions/{model_id}/export?version=1")
    assert exported.status_code == 200
    assert "pricing-v1.dmn" in exported.headers["Content-Disposition"]
    assert b'hitPolicy="UNIQUE"' in exported.data or b"hitPolicy" not in exported.data
    assert designer.get(f"/designer/decisions/{model_id}/export?version=9").status_code == 404


def test_publishing_needs_the_publish_permission(user_with, db_session, import_model):
    model_id = import_model()
    editor_only = user_with(["processes.edit"], ["finance"])
    csrf = token(editor_only, f"/designer/decisions/{model_id}/versions")
    response = editor_only.post(
        f"/designer/decisions/{model_id}/publish",
        data={"csrf_token": csrf, "revision": 1},
    )
    assert response.status_code == 404
    assert db_session.scalar(select(func.count(DecisionVersion.id))) == 0
