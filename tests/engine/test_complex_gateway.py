"""Complex gateways in-process (BPMN 2.0.2 §13.4.5): the activation condition over the branches
that arrived, the split after it, and the reset phase that takes in the late branches."""

from __future__ import annotations

from typing import Any

from tests.helpers.documents import NOOP, document, flow, node, task
from tests.helpers.instances import complete, details, history, load, open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain

BRANCHES = ("a", "b", "c")


def gathered(activation: str | None, *, split: str = "parallelGateway", **branches: Any) -> dict:
    """start -> split -> a, b, c (user tasks unless given) -> complex gateway `cx` -> `after`
    (a user task) -> end; a conditional split takes branch x when `$input.x`."""
    config = {"activation": activation} if activation else {}
    nodes = {"start": node("startEvent"), "split": node(split, "Split")}
    flows = {"f0": flow("start", "split")}
    for name in BRANCHES:
        nodes[name] = branches.get(name) or task(name.upper())
        condition = f"$input.{name}" if split == "inclusiveGateway" else None
        flows[f"to_{name}"] = flow("split", name, condition)
        flows[f"from_{name}"] = flow(name, "cx")
    nodes["cx"] = node("complexGateway", "Enough", **config)
    nodes["after"] = task("After")
    nodes["end"] = node("endEvent")
    flows["f8"] = flow("cx", "after")
    flows["f9"] = flow("after", "end")
    return document(nodes, flows)


def finish(session, instance_id: int, title: str) -> None:
    [chosen] = [t for t in open_tasks(session, instance_id) if t.title == title]
    complete(session, chosen)
    drain(session)


def went_on(session, instance_id: int) -> int:
    """How often the complex gateway went on (its split's `left` entries)."""
    return len([e for e in details(session, instance_id, "left", "cx") if "taken" in e])


def kinds_at(session, instance_id: int, node_id: str) -> list[str]:
    return [kind for kind, at in history(session, instance_id) if at == node_id]


def test_it_goes_on_once_the_condition_holds_and_takes_in_the_late_branch(engine):
    version = publish_document(gathered("$gateway.arrived >= 2"))
    instance_id = start(engine, version)
    finish(engine, instance_id, "A")
    assert went_on(engine, instance_id) == 0
    finish(engine, instance_id, "B")
    assert went_on(engine, instance_id) == 1
    assert [t.title for t in open_tasks(engine, instance_id)] == ["C", "After"]
    [left] = [e for e in details(engine, instance_id, "left", "cx") if "taken" in e]
    assert left["joined"] == 2

    finish(engine, instance_id, "C")
    assert went_on(engine, instance_id) == 1
    assert [t.title for t in open_tasks(engine, instance_id)] == ["After"]
    assert kinds_at(engine, instance_id, "cx")[-2:] == ["gateway_consumed", "gateway_reset"]
    finish(engine, instance_id, "After")
    assert load(engine, instance_id).status == "completed"


def test_waiting_counts_the_flows_without_a_token(engine):
    version = publish_document(gathered("$gateway.waiting <= 1"))
    instance_id = start(engine, version)
    finish(engine, instance_id, "C")
    assert went_on(engine, instance_id) == 0
    finish(engine, instance_id, "A")
    assert went_on(engine, instance_id) == 1


def test_without_a_condition_it_waits_for_every_branch(engine):
    version = publish_document(gathered(None))
    instance_id = start(engine, version)
    finish(engine, instance_id, "A")
    finish(engine, instance_id, "B")
    assert went_on(engine, instance_id) == 0
    finish(engine, instance_id, "C")
    assert went_on(engine, instance_id) == 1
    assert "gateway_reset" not in kinds_at(engine, instance_id, "cx")


def test_the_reset_does_not_wait_for_a_branch_that_was_not_taken(engine):
    """A branch no live token can reach any more ends the reset phase, as an inclusive join
    stops waiting for it: the instance completes."""
    branches = {name: node("serviceTask", **NOOP) for name in BRANCHES}
    version = publish_document(
        gathered("$gateway.arrived >= 1", split="inclusiveGateway", **branches)
    )
    instance_id = start(engine, version, input={"a": True, "b": True, "c": False})
    drain(engine)
    assert went_on(engine, instance_id) == 1
    assert kinds_at(engine, instance_id, "cx").count("gateway_consumed") == 1
    assert kinds_at(engine, instance_id, "cx").count("gateway_reset") == 1
    finish(engine, instance_id, "After")
    assert load(engine, instance_id).status == "completed"


def test_after_a_reset_a_new_round_activates_it_again(engine):
    """A loop brings the branches back: after the reset, the next arrivals start anew."""
    doc = gathered("$gateway.arrived >= 1")
    form = {"fields": [{"key": "n", "label": "Round", "type": "number"}]}
    doc["nodes"].update(
        merge=node("exclusiveGateway", "Merge"),
        again=node("exclusiveGateway", "Again?"),
        after=task("After", saveTo="round", form=form),
    )
    doc["nodes"]["merge"]["position"] = doc["nodes"]["again"]["position"] = {"x": 0, "y": 300}
    doc["flows"].update(
        f0=flow("start", "merge"),
        into=flow("merge", "split"),
        f9=flow("after", "again"),
        loop=flow("again", "merge", "$vars.round.n == 1"),
        done=flow("again", "end", default=True),
    )
    version = publish_document(doc)
    instance_id = start(engine, version)
    finish(engine, instance_id, "A")
    assert went_on(engine, instance_id) == 1
    finish(engine, instance_id, "B")
    finish(engine, instance_id, "C")
    assert kinds_at(engine, instance_id, "cx").count("gateway_reset") == 1
    [after] = [t for t in open_tasks(engine, instance_id) if t.title == "After"]
    complete(engine, after, {"n": 1})
    drain(engine)
    finish(engine, instance_id, "B")
    assert went_on(engine, instance_id) == 2
