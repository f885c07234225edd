"""Ad-hoc sub-processes in BPMN files: the standard attributes (ordering, cancelling what
remains, the completion condition), Camunda 8's activities to activate and Flowable's JUEL
condition import; export writes them back and re-imports to the same document."""

from __future__ import annotations

from lxml import etree

from tests.helpers.bpmn import NAMESPACES, codes, definitions, same_after_round_trip
from webapp.process.bpmn import import_bpmn
from webapp.process.bpmn.namespaces import BPMN, q

ADHOC = """
  <{p}process id="p" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}adHocSubProcess id="work" name="Work" ordering="Sequential"
        cancelRemainingInstances="false">
      <{p}extensionElements><zeebe:adHoc activeElementsCollection="=plan"/></{p}extensionElements>
      <{p}userTask id="a" name="A"/>
      <{p}userTask id="b" name="B"/>
      <{p}sequenceFlow id="inner" sourceRef="a" targetRef="b"/>
      <{p}manualTask id="c" name="C"/>
      <{p}completionCondition xsi:type="{p}tFormalExpression">=done = true</{p}completionCondition>
    </{p}adHocSubProcess>
    <{p}endEvent id="e"/>
    <{p}sequenceFlow id="f1" sourceRef="s" targetRef="work"/>
    <{p}sequenceFlow id="f2" sourceRef="work" targetRef="e"/>
  </{p}process>
"""
XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'


def test_camunda_8_ad_hoc_settings_import_and_export():
    result = import_bpmn(definitions(ADHOC, extra_ns=f"{NAMESPACES} {XSI}"))
    assert result.unsupported == []
    work = result.document["nodes"]["work"]
    assert work["config"] == {
        "ordering": "sequential",
        "cancelRemaining": False,
        "completion": "$vars.done == true",
        "activate": "$vars.plan",
    }
    assert {n: result.document["nodes"][n].get("parent") for n in "abc"} == dict.fromkeys(
        "abc", "work"
    )
    root = etree.fromstring(same_after_round_trip(result.document).encode())
    written = next(root.iter(q(BPMN, "adHocSubProcess")))
    assert (written.get("ordering"), written.get("cancelRemainingInstances")) == (
        "Sequential",
        "false",
    )
    assert written.findtext(q(BPMN, "completionCondition")) == "$vars.done == true"


def test_a_flowable_juel_completion_condition_is_translated_or_named():
    flowable = ADHOC.replace("=done = true", "${{done == true}}").replace(
        '<zeebe:adHoc activeElementsCollection="=plan"/>', ""
    )
    result = import_bpmn(definitions(flowable, extra_ns=f"{NAMESPACES} {XSI}"))
    config = result.document["nodes"]["work"]["config"]
    assert config["completion"].startswith("$vars.done == true")
    weird = ADHOC.replace("=done = true", "${{myBean.check(x)}}")
    kept = import_bpmn(definitions(weird, extra_ns=f"{NAMESPACES} {XSI}"))
    assert "import.condition_untranslated" in codes(kept)
