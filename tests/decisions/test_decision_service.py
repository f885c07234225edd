"""The decisions service: import, edits, example rows, publish and what it refuses, named."""

from __future__ import annotations

import pytest

from tests.helpers.decisions import DISCOUNT_DMN, designer_user, partition_id
from webapp.models import DecisionModel, DecisionProvision, DecisionVersion
from webapp.models.decisions import published_decision
from webapp.process import decision_examples, dmn
from webapp.services import decisions
from webapp.services.decisions import DecisionServiceError, StaleDraft


def _model(db_session, model_id: int) -> DecisionModel:
    db_session.expire_all()
    return db_session.get(DecisionModel, model_id)


def test_import_takes_the_file_id_as_key_and_keeps_the_table(db_session, import_model):
    model = _model(db_session, import_model())
    assert model.key == "pricing"
    assert model.name == "Pricing"
    assert model.draft_revision == 1
    table = model.draft_document["decisions"][0]["table"]
    assert [rule["id"] for rule in table["rules"]] == ["small", "gold", "plain"]
    assert decisions.draft_problems(model) == []


def test_unreadable_file_is_refused_with_its_line_and_nothing_is_written(db_session, demo):
    broken = DISCOUNT_DMN.replace("</decision>", "</decisio>")
    with pytest.raises(DecisionServiceError) as refused:
        decisions.import_new(broken, partition_id=None, actor=designer_user(db_session))
    assert refused.value.code == "import.unreadable"
    assert "line" in refused.value.message
    assert db_session.query(DecisionModel).count() == 0


def test_a_taken_key_is_refused(db_session, import_model):
    import_model()
    with pytest.raises(DecisionServiceError) as refused:
        import_model()
    assert refused.value.code == "key.taken"
    assert refused.value.field == "key"


def test_untranslatable_entry_is_named_and_blocks_publish(db_session, import_model):
    model_id = import_model(DISCOUNT_DMN.replace("&lt; 100", "&lt; &lt; 100"))
    model = _model(db_session, model_id)
    problems = decisions.draft_problems(model)
    blocking = [p for p in problems if p.blocking]
    assert blocking and "rule 1" in blocking[0].message and "Amount" in blocking[0].message
    with pytest.raises(DecisionServiceError) as refused:
        decisions.publish(model, actor=designer_user(db_session))
    assert refused.value.code == "publish.problems"
    assert "rule 1" in refused.value.message
    assert db_session.query(DecisionVersion).count() == 0


def test_cell_edit_translates_the_new_text_and_a_stale_revision_is_refused(
    db_session, import_model
):
    model = _model(db_session, import_model())
    params = {"rule": "2", "side": "input", "column": "1", "text": '"silver"'}
    state = decisions.edit_draft(
        model, "cell", "discount", params, base_revision=1, actor=designer_user(db_session)
    )
    assert state.revision == 2
    model = _model(db_session, model.id)
    cell = model.draft_document["decisions"][0]["table"]["rules"][2]["inputs"][1]
    assert cell["text"] == '"silver"'
    assert cell["test"] is not None
    evaluation = dmn.evaluate_table(
        model.draft_document, "discount", {"amount": 150, "tier": "bronze"}
    )
    assert evaluation.result is None
    with pytest.raises(StaleDraft):
        decisions.edit_draft(
            model, "cell", "discount", params, base_revision=1, actor=designer_user(db_session)
        )


@pytest.mark.parametrize(
    ("edit", "params", "field"),
    [
        ("hit-policy", {"hit_policy": "SOMETIMES"}, "hit_policy"),
        ("hit-policy", {"hit_policy": "FIRST", "aggregation": "SUM"}, "aggregation"),
        ("cell", {"rule": "7", "side": "input", "column": "0", "text": "1"}, "rule"),
        ("output", {"column": "0", "name": "not a name", "type": "number"}, "name"),
        ("input", {"column": "0", "label": "Amount", "text": "amount", "type": "money"}, "type"),
        ("remove-output", {"column": "0"}, "column"),
        ("move-rule", {"rule": "0", "direction": "up"}, "direction"),
    ],
)
def test_bad_edits_are_refused_naming_the_field_and_leave_the_draft(
    db_session, import_model, edit, params, field
):
    model = _model(db_session, import_model())
    before = model.draft_document
    with pytest.raises(DecisionServiceError) as refused:
        decisions.edit_draft(
            model, edit, "discount", params, base_revision=1, actor=designer_user(db_session)
        )
    assert refused.value.field == field
    model = _model(db_session, model.id)
    assert model.draft_revision == 1
    assert model.draft_document == before


def test_structure_edits_add_move_and_remove_rules_and_columns(db_session, import_model):
    model = _model(db_session, import_model())
    actor = designer_user(db_session)
    revision = 1
    for edit, params in [
        ("add-rule", {}),
        ("move-rule", {"rule": "0", "direction": "down"}),
        ("add-input", {}),
        ("remove-rule", {"rule": "3"}),
        ("hit-policy", {"hit_policy": "COLLECT", "aggregation": "SUM"}),
    ]:
        revision = decisions.edit_draft(
            model, edit, "discount", params, base_revision=revision, actor=actor
        ).revision
        model = _model(db_session, model.id)
    table = model.draft_document["decisions"][0]["table"]
    assert [rule["id"] for rule in table["rules"]] == ["gold", "small", "plain"]
    assert len(table["inputs"]) == 3
    assert all(len(rule["inputs"]) == 3 for rule in table["rules"])
    assert (table["hitPolicy"], table["aggregation"]) == ("COLLECT", "SUM")


def test_examples_run_gate_publish_and_travel_in_the_exported_file(db_session, import_model):
    model = _model(db_session, import_model())
    actor = designer_user(db_session)
    decisions.add_example(
        model,
        "discount",
        {"amount": 150, "tier": "gold"},
        10,
        name="gold order",
        base_revision=1,
        actor=actor,
    )
    model = _model(db_session, model.id)
    [result] = decisions.run_examples(model)
    assert result.passed and result.matched == (2,)

    decisions.edit_draft(
        model,
        "cell",
        "discount",
        {"rule": "1", "side": "output", "column": "0", "text": "12"},
        base_revision=2,
        actor=actor,
    )
    model = _model(db_session, model.id)
    with pytest.raises(DecisionServiceError) as refused:
        decisions.publish(model, actor=actor)
    assert refused.value.code == "publish.examples"
    assert "gold order" in refused.value.message
    assert refused.value.failures[0].actual == 12

    xml = decisions.export_xml(model.draft_document, model.draft_examples)
    assert b"flowdesk.dev" in xml and b"gold order" in xml
    stripped, rows = decision_examples.split(xml)
    assert rows == model.draft_examples
    assert b"gold order" not in stripped
    again, _ = decisions.import_new(xml, key="pricing-copy", partition_id=None, actor=actor)
    assert again.draft_examples == model.draft_examples


def test_example_naming_an_unknown_column_is_refused(db_session, import_model):
    model = _model(db_session, import_model())
    with pytest.raises(DecisionServiceError) as refused:
        decisions.add_example(
            model, "discount", {"weight": 1}, 0, base_revision=1, actor=designer_user(db_session)
        )
    assert "weight" in refused.value.message
    assert _model(db_session, model.id).draft_examples == []


def test_publish_numbers_versions_provides_ids_and_refuses_unchanged(db_session, import_model):
    model = _model(db_session, import_model())
    actor = designer_user(db_session)
    v1 = decisions.publish(model, actor=actor, note="first")
    assert v1.number == 1
    assert b"discount" in v1.xml.encode()
    finance = partition_id(db_session, "finance")
    assert published_decision(db_session, "discount", finance, None).id == v1.id
    with pytest.raises(DecisionServiceError) as refused:
        decisions.publish(_model(db_session, model.id), actor=actor)
    assert refused.value.code == "publish.unchanged"

    model = _model(db_session, model.id)
    decisions.edit_draft(
        model, "hit-policy", "discount", {"hit_policy": "FIRST"}, base_revision=1, actor=actor
    )
    v2 = decisions.publish(_model(db_session, model.id), actor=actor)
    assert v2.number == 2
    assert published_decision(db_session, "discount", finance, None).number == 2
    assert published_decision(db_session, "discount", finance, 1).number == 1
    assert db_session.query(DecisionProvision).count() == 2
    assert v1.document["decisions"][0]["table"]["hitPolicy"] == "UNIQUE"


def test_a_second_model_providing_the_same_id_in_a_partition_is_refused(db_session, import_model):
    actor = designer_user(db_session)
    decisions.publish(_model(db_session, import_model()), actor=actor)
    copy = _model(db_session, import_model(key="pricing-2"))
    with pytest.raises(DecisionServiceError) as refused:
        decisions.publish(copy, actor=actor)
    assert refused.value.code == "publish.duplicate"
    assert "'pricing'" in refused.value.message and "discount" in refused.value.message
    elsewhere = _model(db_session, import_model(key="pricing-hr", partition="hr"))
    assert decisions.publish(elsewhere, actor=actor).number == 1


def test_compare_names_rules_columns_and_hit_policy(db_session, import_model):
    model = _model(db_session, import_model())
    actor = designer_user(db_session)
    old = model.draft_document
    revision = 1
    for edit, params in [
        ("hit-policy", {"hit_policy": "FIRST"}),
        ("cell", {"rule": "0", "side": "input", "column": "0", "text": "< 50"}),
        ("remove-rule", {"rule": "2"}),
        ("add-output", {}),
    ]:
        revision = decisions.edit_draft(
            model, edit, "discount", params, base_revision=revision, actor=actor
        ).revision
        model = _model(db_session, model.id)
    changes = decisions.compare(old, model.draft_document)
    described = {(c.status, c.what) for c in changes}
    assert ("changed", "hit policy") in described
    assert ("changed", "rule 1") in described
    assert ("removed", "rule 3") in described
    assert ("added", "output column") in described
    assert decisions.compare(old, old) == []
