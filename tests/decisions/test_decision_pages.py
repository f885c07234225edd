"""Decision pages over HTTP: list, import, the table editor's posts, try it, example rows,
publish, compare and export; partitions and permissions; refusals are 4xx and write nothing."""

from __future__ import annotations

import io
import re

from sqlalchemy import func, select

from tests.helpers.decisions import DISCOUNT_DMN, FEE_DMN
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


def test_literal_decision_is_edited_and_a_broken_expression_named(
    login_as, db_session, import_model
):
    model_id = import_model(FEE_DMN)
    designer = login_as("designer")
    page = designer.get(f"/designer/decisions/{model_id}").get_data(as_text=True)
    assert "literal expression" in page and "amount * 0.1" in page
    csrf = token(designer, f"/designer/decisions/{model_id}")
    response = designer.post(
        f"/designer/decisions/{model_id}/edit",
        data={"decision": "fee", "revision": 1, "edit": "literal", "text": "amount * 0.2 +",
              "variable": "fee", "type": "number"},
        headers={"X-CSRFToken": csrf, **HTMX},
    )  # fmt: skip
    body = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "cannot translate the literal expression" in body and "Blocks publish" in body
    literal = _model(db_session, model_id).draft_document["decisions"][0]["literal"]
    assert literal["text"] == "amount * 0.2 +" and literal["expression"] is None
    refused = designer.post(
        f"/designer/decisions/{model_id}/edit",
        data={"decision": "fee", "revision": 2, "edit": "literal", "text": "1",
              "variable": "no way"},
        headers={"X-CSRFToken": csrf, **HTMX},
    )  # fmt: skip
    assert refused.status_code == 422
    assert "variable" in refused.get_data(as_text=True)
    assert _model(db_session, model_id).draft_revision == 2


def test_a_file_replaces_the_draft_unless_someone_saved_since(login_as, db_session, import_model):
    model_id = import_model()
    designer = login_as("designer")
    path = f"/designer/decisions/{model_id}/import"
    newer = DISCOUNT_DMN.replace('hitPolicy="UNIQUE"', 'hitPolicy="FIRST"').encode()
    stale = _upload(designer, path, newer, revision=5)
    assert stale.status_code == 409
    assert "saved by someone else" in stale.get_data(as_text=True)
    assert _model(db_session, model_id).draft_revision == 1
    empty = _upload(designer, path, b"", revision=1)
    assert empty.status_code == 422
    huge = _upload(designer, path, b" " * 5_000_001, revision=1)
    assert huge.status_code == 413
    assert "larger than 5,000,000 bytes" in huge.get_data(as_text=True)
    done = _upload(designer, path, newer, revision=1)
    assert done.status_code == 302
    model = _model(db_session, model_id)
    assert model.draft_revision == 2
    assert model.draft_document["decisions"][0]["table"]["hitPolicy"] == "FIRST"


def test_the_list_filters_by_partition(login_as, db_session, import_model):
    import_model()
    import_model(key="shared-rules", partition=None)
    designer = login_as("designer")
    shared = designer.get("/designer/decisions/?partition=none").get_data(as_text=True)
    assert "shared-rules" in shared and ">pricing<" not in shared
    own = designer.get(f"/designer/decisions/?partition={finance(db_session)}")
    assert ">pricing<" in own.get_data(as_text=True)
    assert "shared-rules" not in own.get_data(as_text=True)


def test_a_decision_without_logic_is_shown_as_such_and_blocks_publish(
    login_as, db_session, import_model
):
    empty = (
        '<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="bare" '
        'name="Bare" namespace="x"><decision id="empty" name="Empty"/></definitions>'
    )
    model_id = import_model(empty)
    designer = login_as("designer")
    page = designer.get(f"/designer/decisions/{model_id}").get_data(as_text=True)
    assert 'id="no-logic"' in page
    assert "neither a decision table nor a literal expression" in page
    csrf = token(designer, f"/designer/decisions/{model_id}/versions")
    refused = designer.post(
        f"/designer/decisions/{model_id}/publish", data={"csrf_token": csrf, "revision": 1}
    )
    assert refused.status_code == 422
    assert "blocking problem" in refused.get_data(as_text=True)


def test_warnings_as_you_type_unreachable_rules_and_gaps_do_not_block(
    login_as, db_session, import_model
):
    model_id = import_model()
    designer = login_as("designer")
    _edit(designer, model_id, 1, edit="hit-policy", hit_policy="FIRST")
    response = _edit(designer, model_id, 2, edit="cell", rule=0, side="input", column=0, text="-")
    body = response.get_data(as_text=True)
    assert "rule 2 is never used" in body and "rule 3 is never used" in body
    assert "Warning" in body and "Blocks publish" not in body
    assert re.search(r'id="rule-flag-1" class="rule-flag has-problem" hx-swap-oob="true"', body)
    gap = _edit(designer, model_id, 3, edit="cell", rule=0, side="input", column=0, text="< 50")
    assert "no rule matches input column &#39;Amount&#39; when it is [50..100[" in gap.get_data(
        as_text=True
    )
    csrf = token(designer, f"/designer/decisions/{model_id}/versions")
    published = designer.post(
        f"/designer/decisions/{model_id}/publish", data={"csrf_token": csrf, "revision": 4}
    )
    assert published.status_code == 302
