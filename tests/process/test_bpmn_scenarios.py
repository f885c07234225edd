"""Test scenarios travel in the BPMN file, in Flowdesk's `<flowdesk:scenarios>` extension."""

import pytest

from tests.helpers.documents import chain, node
from webapp.process.bpmn import BpmnImportError, export_bpmn, import_bpmn, with_scenarios

SCENARIOS = [
    {
        "name": 'Approved <fast> & "quoted"',
        "input": {"amount": 300},
        "actions": [{"do": "complete", "node": "approve", "data": {"ok": True}}],
        "expect": {"status": "completed", "reached": ["end"]},
    },
    {"name": "Left waiting", "input": {}, "actions": [], "expect": {"status": "waiting"}},
]


def _draft() -> dict:
    return chain(("approve", node("userTask", title="Approve")))


def test_scenarios_go_out_with_the_bpmn_file_and_come_back_on_import():
    plain = export_bpmn(_draft())
    xml = with_scenarios(plain, SCENARIOS)
    assert "<flowdesk:scenarios>" in xml
    imported = import_bpmn(xml).document
    assert imported.pop("scenarios") == SCENARIOS
    assert imported == import_bpmn(plain).document
    again = with_scenarios(xml, SCENARIOS[:1])
    assert again.count("<flowdesk:scenarios>") == 1
    assert import_bpmn(again).document["scenarios"] == SCENARIOS[:1]


def test_without_scenarios_the_file_is_unchanged_and_imports_none():
    plain = export_bpmn(_draft())
    assert with_scenarios(plain, []) == plain
    assert "scenarios" not in import_bpmn(plain).document


@pytest.mark.parametrize(
    ("text", "reason"),
    [("[{", "is not JSON"), ('{"name": "x"}', "must be a JSON list of scenarios")],
)
def test_a_malformed_scenarios_element_refuses_the_import_naming_its_line(text, reason):
    xml = with_scenarios(export_bpmn(_draft()), [{"name": "placeholder"}])
    line = next(
        number for number, row in enumerate(xml.splitlines(), 1) if "flowdesk:scenarios" in row
    )
    broken = xml.replace('[{"name":"placeholder"}]', text.replace("&", "&amp;"))
    with pytest.raises(BpmnImportError) as refused:
        import_bpmn(broken)
    assert "flowdesk:scenarios of process" in refused.value.message
    assert reason in refused.value.message
    assert refused.value.line == line
