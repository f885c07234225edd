"""The instance page says what a token at a complex gateway waits for: its activation condition,
with how many branches arrived; the reset wait after it went on is no token of work."""

from __future__ import annotations

from tests.helpers.documents import document, flow, node, task
from tests.helpers.instances import complete, open_tasks, start
from tests.helpers.pages import diagram_state
from tests.helpers.processes import publish_document


def test_a_complex_gateway_says_how_many_branches_arrived(operator, engine, demo):
    nodes = {"start": node("startEvent"), "split": node("parallelGateway", "Split")}
    flows = {"f0": flow("start", "split")}
    for name in "abc":
        nodes[name] = task(name.upper())
        flows[f"to_{name}"] = flow("split", name)
        flows[f"from_{name}"] = flow(name, "cx")
    nodes["cx"] = node("complexGateway", "Two of three", activation="$gateway.arrived >= 2")
    nodes["after"] = task("After")
    nodes["end"] = node("endEvent")
    flows.update(out=flow("cx", "after"), done=flow("after", "end"))
    instance_id = start(engine, publish_document(document(nodes, flows), key="two"))
    path = f"/operations/instances/{instance_id}"
    [first, *_] = open_tasks(engine, instance_id)
    complete(engine, first)
    state = diagram_state(operator.get(path).get_data(as_text=True))
    assert state["awaits"] == {"cx": "its activation condition (1 of 3 branches arrived)"}
    assert state["active"]["cx"] == 1
    second = next(t for t in open_tasks(engine, instance_id) if t.title == "B")
    complete(engine, second)
    state = diagram_state(operator.get(path).get_data(as_text=True))
    assert "cx" not in state["awaits"] and "cx" not in state["active"], "the reset wait is no token"
    assert state["active"]["after"] == 1
