"""A complex gateway's branches arriving at the same moment, from timers two real RQ workers fire
in parallel: it goes on exactly once, takes in the others and resets once, in every instance."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.helpers.documents import document, flow, node
from tests.helpers.instances import details, history, load, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for

TRIALS = 12
BRANCHES = ("a", "b", "c")


def _racing() -> dict:
    """start -> parallel split -> three timers due at `$input.due` -> complex gateway (one
    branch is enough) -> end."""
    nodes = {"start": node("startEvent"), "split": node("parallelGateway", "Split")}
    flows = {"f0": flow("start", "split")}
    for name in BRANCHES:
        nodes[name] = node("timerCatch", name.upper(), date="$input.due")
        flows[f"to_{name}"] = flow("split", name)
        flows[f"from_{name}"] = flow(name, "cx")
    nodes["cx"] = node("complexGateway", "First", activation="$gateway.arrived >= 1")
    nodes["end"] = node("endEvent")
    flows["out"] = flow("cx", "end")
    return document(nodes, flows)


def test_parallel_arrivals_go_on_once_and_reset_once(engine, workers):
    version = publish_document(_racing())
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
    instances = [start(engine, version, input={"due": due.isoformat()}) for _ in range(TRIALS)]
    workers.start(2)

    def all_done() -> bool:
        return all(load(engine, i).status == "completed" for i in instances)

    wait_for(all_done, timeout=60, what="every instance to complete")
    for instance_id in instances:
        entries = history(engine, instance_id)
        went_on = [e for e in details(engine, instance_id, "left", "cx") if "taken" in e]
        assert len(went_on) == 1, entries
        assert went_on[0]["joined"] >= 1
        consumed = entries.count(("gateway_consumed", "cx"))
        assert went_on[0]["joined"] + consumed == len(BRANCHES), entries
        assert entries.count(("gateway_reset", "cx")) == (1 if consumed else 0), entries
        assert entries.count(("entered", "end")) == 1
