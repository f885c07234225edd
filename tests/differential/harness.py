"""One differential run: the same file and scenario through Flowdesk and SpiffWorkflow, skipped
with the reason when either cannot run it, failed with the differences when they disagree."""

from __future__ import annotations

from collections import Counter

import pytest
from lxml import etree

from tests.differential import flowdesk_side, spiff_side
from tests.differential.scenario import Outcome, Scenario, difference
from webapp.process.bpmn import import_bpmn
from webapp.services import processes
from webapp.services.processes import ImportRefused, ProcessError

BPMN = "{http://www.omg.org/spec/BPMN/20100524/MODEL}"


def chosen_process(xml: bytes, scenario: Scenario) -> str:
    """The process both engines run: the scenario's, else the one Flowdesk's importer picks."""
    return scenario.process or str(import_bpmn(xml).document.get("key") or "")


def executable(xml: bytes, process_id: str) -> bool:
    root = etree.fromstring(xml, etree.XMLParser(resolve_entities=False, no_network=True))
    for process in root.iter(f"{BPMN}process"):
        if process.get("id") == process_id:
            return process.get("isExecutable", "true").strip() != "false"
    return True


def precheck(xml: bytes, scenario: Scenario, called: tuple[bytes, ...] = ()) -> str | None:
    """Why the file (or a file it calls) cannot run at all (not executable, refused by the
    importer), else None; needs no database, so such files are skipped before any set-up."""
    for number, other in enumerate(called):
        reason = precheck(other, Scenario())
        if reason:
            return f"the called file {scenario.called[number]} cannot run: {reason}"
    try:
        result = processes.read_upload(xml)
    except ImportRefused as refused:
        return f"Flowdesk's importer refuses the file: {refused.message}"
    process_id = chosen_process(xml, scenario)
    if not executable(xml, process_id):
        return f"process '{process_id}' is not executable (isExecutable=\"false\")"
    if result.unsupported:
        kinds = Counter(item.type for item in result.unsupported)
        listed = ", ".join(f"{kind} x{count}" for kind, count in sorted(kinds.items()))
        return f"Flowdesk's importer refuses the file, it cannot run: {listed}"
    nodes = result.document.get("nodes") or {}
    for node_id in scenario.scripts:
        kind = (nodes.get(node_id) or {}).get("kind")
        if kind is not None and kind != "scriptTask":
            return f"Flowdesk's importer reads the script task '{node_id}' as a {kind}"
    return None


def oracle(xml: bytes, scenario: Scenario, called: tuple[bytes, ...] = ()) -> Outcome | None:
    """Spiff's outcome as the BPMN spec has it: where the scenario records that Spiff departs
    from the spec, check that it still does and put the spec's outcome in its place; None
    where Spiff still fails with the error the scenario records (nothing to compare with)."""
    try:
        spiff = spiff_side.run(xml, chosen_process(xml, scenario), scenario, called)
    except spiff_side.Unrunnable as error:
        if scenario.spiff_unknown is not None and scenario.spiff_unknown in str(error):
            assert scenario.expect is not None and scenario.completed, (
                "spiff_unknown needs the spec's outcome in expect and completed"
            )
            return None
        pytest.skip(f"SpiffWorkflow cannot run it: {error}")
    if scenario.spiff_error is not None:
        assert scenario.expect is not None and scenario.completed, (
            "spiff_error needs the spec's outcome in expect and completed"
        )
        assert spiff.state == "failed" and scenario.spiff_error in spiff.detail, spiff
        return None
    if scenario.spiff_extra:
        extra = Counter(scenario.spiff_extra)
        assert spiff.completed & extra == extra, f"Spiff no longer completes {extra}: {spiff}"
        spiff = Outcome(spiff.completed - extra, spiff.state, spiff.at, spiff.detail)
    if scenario.spiff_missing:
        # Once Spiff completes them itself, the sum exceeds Flowdesk's and the comparison fails.
        missing = Counter(scenario.spiff_missing)
        spiff = Outcome(spiff.completed + missing, spiff.state, spiff.at, spiff.detail)
    if scenario.spiff_expect is not None:
        assert scenario.expect is not None, "spiff_expect needs the spec's outcome in expect"
        assert (spiff.state, spiff.at) == scenario.spiff_expect, spiff
        spiff = Outcome(spiff.completed, *scenario.expect)
    return spiff


def compare(
    xml: bytes,
    scenario: Scenario,
    runner: flowdesk_side.Runner,
    *,
    known: bool,
    called: tuple[bytes, ...] = (),
) -> tuple[Outcome, Outcome | None]:
    """Run both engines; `known`: the scenario was written for this file (an unexpected publish
    refusal then fails instead of skipping); `called`: the files of `scenario.called`."""
    try:
        version = flowdesk_side.publish(xml, scenario, runner.key, called)
    except ImportRefused as refused:
        pytest.skip(f"Flowdesk's importer refuses the file: {refused.message}")
    except ProcessError as refused:
        found = sorted(
            {
                f"{p.code} ({p.element_id}): {p.message}"
                for p in refused.problems
                if p.severity == "error"
            }
        )
        codes = {p.code for p in refused.problems if p.severity == "error"}
        if scenario.refused and scenario.refused in codes:
            pytest.skip(f"Flowdesk refuses to publish it, as expected: {scenario.note}")
        message = f"Flowdesk refuses to publish it: {'; '.join(found) or refused.message}"
        if known:
            pytest.fail(message)
        pytest.skip(message)
    spiff = oracle(xml, scenario, called)
    flowdesk = flowdesk_side.run(version, scenario, runner.user)
    if spiff is not None:
        differs = difference(flowdesk, spiff)
        assert not differs, f"the engines disagree ({scenario.note or 'no note'}):\n{differs}"
    else:
        assert flowdesk.completed == Counter(scenario.completed), flowdesk
    if scenario.expect is not None:
        assert (flowdesk.state, flowdesk.at) == scenario.expect, flowdesk
    return flowdesk, spiff
