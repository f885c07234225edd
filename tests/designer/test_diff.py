"""The pure comparison of two process documents."""

from tests.helpers.documents import approval_document
from webapp.process.diff import Change, diff_documents, value_changes


def test_identical_documents_have_no_differences():
    diff = diff_documents(approval_document(), approval_document())
    assert diff.empty and diff.statuses() == {}


def test_added_removed_changed_and_moved_are_told_apart():
    old, new = approval_document(), approval_document()
    new["nodes"]["review"]["config"]["assignee"]["value"] = "bob"
    new["nodes"]["done"]["position"] = {"x": 900, "y": 100}
    del new["nodes"]["rejected"], new["flows"]["f4"]
    new["nodes"]["extra"] = {"kind": "endEvent"}
    new["flows"]["f5"] = {"source": "ok", "target": "extra", "default": True}
    diff = diff_documents(old, new)
    assert diff.statuses() == {
        "review": "changed",
        "done": "moved",
        "rejected": "removed",
        "extra": "added",
        "f4": "removed",
        "f5": "added",
    }
    [review] = [d for d in diff.nodes if d.id == "review"]
    assert review.changes == (Change("config.assignee.value", "alice", "bob"),)
    assert review.label == "User task 'Review'"
    assert (diff.count("added"), diff.count("removed"), diff.count("moved")) == (2, 2, 1)


def test_flow_changes_and_order_of_a_gateways_flows():
    old, new = approval_document(), approval_document()
    new["flows"]["f3"]["condition"] = "$vars.review.approved"
    diff = diff_documents(old, new)
    [flow] = diff.flows
    assert (flow.id, flow.status) == ("f3", "changed")
    assert flow.changes == (
        Change("condition", "$vars.review.approved == true", "$vars.review.approved"),
    )
    reordered = approval_document()
    reordered["flows"] = {k: reordered["flows"][k] for k in ("f1", "f2", "f4", "f3")}
    [gateway] = diff_documents(old, reordered).nodes
    assert gateway.id == "ok" and gateway.status == "changed"
    assert gateway.changes == (Change("outgoing flow order", ["f3", "f4"], ["f4", "f3"]),)


def test_value_changes_walks_dicts_and_same_length_lists():
    old = {"a": 1, "form": {"fields": [{"key": "x", "label": "X"}]}, "gone": True}
    new = {"a": 1, "form": {"fields": [{"key": "x", "label": "Y"}]}, "new": [1]}
    assert list(value_changes(old, new)) == [
        Change("form.fields[1].label", "X", "Y"),
        Change("gone", True, None),
        Change("new", None, [1]),
    ]
    assert list(value_changes([1], [1, 2])) == [Change("", [1], [1, 2])]
    assert list(value_changes(1, 1.0)) == [Change("", 1, 1.0)]


def test_a_flow_is_moved_only_when_its_own_route_changed():
    old, new = approval_document(), approval_document()
    old["flows"]["f2"]["waypoints"] = [{"x": 100, "y": 100}, {"x": 200, "y": 100}]
    new["flows"]["f2"]["waypoints"] = [{"x": 100, "y": 100}, {"x": 200, "y": 160}]
    old["flows"]["f3"]["waypoints"] = [{"x": 300, "y": 100}, {"x": 400, "y": 100}]
    new["flows"]["f3"]["waypoints"] = [{"x": 300, "y": 100}, {"x": 400, "y": 100}]
    new["nodes"]["review"]["position"] = {"x": 180, "y": 130}
    new["flows"]["f1"]["waypoints"] = [{"x": 50, "y": 100}, {"x": 180, "y": 170}]
    assert diff_documents(old, new).statuses() == {"review": "moved"}, (
        "f1 and f2 only followed the moved review task; f3 kept its route"
    )

    rerouted = approval_document()
    rerouted["flows"]["f3"]["waypoints"] = [{"x": 300, "y": 100}, {"x": 300, "y": 40}]
    old["flows"]["f3"]["waypoints"] = [{"x": 300, "y": 100}, {"x": 400, "y": 100}]
    assert diff_documents(old, rerouted).statuses()["f3"] == "moved"
    assert "f3" not in diff_documents(approval_document(), rerouted).statuses(), (
        "a route drawn for the first time is not a move"
    )
