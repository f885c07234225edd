"""Corpus files with the elements of the ad-hoc part: Camunda 8's AI email support agent (an
ad-hoc sub-process driven by the AI agent's job worker) imports with every vendor setting kept
and exports back; the kitchen sink's complex gateway imports, and what it still refuses belongs
to other elements."""

from __future__ import annotations

import pytest

from tests.helpers.bpmn import bpmn_schema
from tests.helpers.corpus_files import CORPUS, check_roundtrip, load
from webapp.process.bpmn import import_bpmn
from webapp.process.bpmn.namespaces import ZEEBE
from webapp.process.validation import validate

pytestmark = pytest.mark.skipif(CORPUS is None, reason="the shared BPMN corpus is not here")

AGENT = "camunda-platform-tutorials/AI Email Support Agent.bpmn"
OURS = ("adHocSubProcess", "complexGateway", "instantiate", "timeCycle")


def test_the_ai_agent_imports_keeps_its_vendor_settings_and_names_why_it_does_not_publish():
    result = import_bpmn(load(AGENT))
    assert result.unsupported == []
    agent = result.document["nodes"]["Activity_04glkkx"]
    assert agent["kind"] == "adHocSubProcess"
    assert agent["config"]["worker"] == "io.camunda.agenticai:aiagent-job-worker:1"
    kept = {item["tag"] for item in agent["kept"]}
    for setting in ("adHoc", "taskDefinition", "ioMapping", "taskHeaders"):
        assert f"{{{ZEEBE}}}{setting}" in kept
    nodes = result.document["nodes"].values()
    tools = [n["title"] for n in nodes if n.get("parent") == "Activity_04glkkx"]
    assert "Ask customer via email" in tools and "Ask loan specialist" in tools
    check_roundtrip(result, bpmn_schema())
    errors = {p.code for p in validate(result.document) if p.severity == "error"}
    assert "adhoc.worker" in errors
    assert errors <= {"adhoc.worker", "expression.foreign", "tool.unknown", "tool.missing"}


def test_the_kitchen_sink_refuses_nothing_of_this_part():
    result = import_bpmn(load("bpmn-js-examples/kitchen-sink.bpmn"))
    assert not [u for u in result.unsupported if any(word in u.type for word in OURS)]
    kinds = {node["kind"] for node in result.document["nodes"].values()}
    assert "complexGateway" in kinds
