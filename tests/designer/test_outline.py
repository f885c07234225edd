"""The outline view: add, rename, connect, delete and configure with plain forms; stale forms
get 409 with the current outline; bad input gets 422 and changes nothing."""

import re

from tests.helpers.designer import get_process, post_edit, token
from tests.helpers.documents import approval_document


def draft(db_session, pid):
    return get_process(db_session, pid).draft_document


def test_the_outline_lists_nodes_flows_and_problems(designer, pid):
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    for text in ('id="node-review"', 'id="node-f3"', "$vars.review.approved == true", "default"):
        assert text in page
    assert 'for="title-review"' in page and "New title for Review" in page


def test_add_a_node_connected_from_another(designer, pid, db_session):
    response = post_edit(
        designer, f"/designer/{pid}/outline/nodes", kind="serviceTask", title="Pay", after="done"
    )
    assert response.status_code == 302
    doc = draft(db_session, pid)
    assert list(doc["nodes"])[-1] == "serviceTask_1"
    node = doc["nodes"]["serviceTask_1"]
    assert node["title"] == "Pay"
    assert node["position"]["x"] > doc["nodes"]["done"]["position"]["x"]
    assert [(f["source"], f["target"]) for f in doc["flows"].values()][-1] == (
        "done",
        "serviceTask_1",
    )
    assert get_process(db_session, pid).draft_revision == 2


def test_a_new_unconnected_node_goes_below_the_rest_without_overlap(designer, pid, db_session):
    post_edit(designer, f"/designer/{pid}/outline/nodes", kind="timerCatch", title="Wait")
    doc = draft(db_session, pid)
    lowest = max(
        n["position"]["y"] + n["position"]["height"]
        for k, n in doc["nodes"].items()
        if k != "timerCatch_1"
    )
    assert doc["nodes"]["timerCatch_1"]["position"]["y"] > lowest


def test_rename_connect_and_delete(designer, pid, db_session):
    assert (
        post_edit(designer, f"/designer/{pid}/outline/nodes/done/rename", title="Paid").status_code
        == 302
    )
    assert (
        post_edit(
            designer, f"/designer/{pid}/outline/flows", 2, source="start", target="done"
        ).status_code
        == 302
    )
    doc = draft(db_session, pid)
    assert doc["nodes"]["done"]["title"] == "Paid"
    assert ("start", "done") in {(f["source"], f["target"]) for f in doc["flows"].values()}
    assert post_edit(designer, f"/designer/{pid}/outline/nodes/ok/delete", 3).status_code == 302
    doc = draft(db_session, pid)
    assert "ok" not in doc["nodes"]
    assert all("ok" not in (f["source"], f["target"]) for f in doc["flows"].values())
    assert post_edit(designer, f"/designer/{pid}/outline/flows/f1/delete", 4).status_code == 302
    assert "f1" not in draft(db_session, pid)["flows"]


def test_bad_outline_input_is_refused_with_a_message(designer, pid, db_session):
    cases = [
        ("outline/flows", {"source": "done", "target": "done"}, "back to itself"),
        ("outline/flows", {"source": "start", "target": "review"}, "already connected"),
        ("outline/flows", {"source": "start", "target": "ghost"}, "Choose two nodes"),
        ("outline/nodes", {"kind": "robotTask", "title": "X"}, "Check the new node"),
        ("outline/nodes", {"kind": "userTask", "after": "ghost"}, "Check the new node"),
        ("outline/nodes/ghost/rename", {"title": "X"}, "no node or flow &#39;ghost&#39;"),
        ("outline/nodes/ghost/delete", {}, "no node &#39;ghost&#39;"),
        ("outline/flows/ghost/delete", {}, "no flow &#39;ghost&#39;"),
        ("outline/nodes/review/rename", {"title": "x" * 201}, "at most 200"),
    ]
    for path, data, message in cases:
        response = post_edit(designer, f"/designer/{pid}/{path}", **data)
        assert response.status_code == 422, path
        assert message in response.get_data(as_text=True), (path, message)
    assert get_process(db_session, pid).draft_revision == 1


def test_a_stale_outline_form_gets_409_and_the_current_draft(designer, pid, db_session):
    post_edit(designer, f"/designer/{pid}/outline/nodes/done/rename", title="Paid")
    response = post_edit(designer, f"/designer/{pid}/outline/nodes/done/rename", title="Stale")
    assert response.status_code == 409
    html = response.get_data(as_text=True)
    assert "saved by someone else" in html and 'value="Paid"' in html
    assert 'name="revision" value="2"' in html
    assert draft(db_session, pid)["nodes"]["done"]["title"] == "Paid"
    missing = designer.post(
        f"/designer/{pid}/outline/nodes/done/rename",
        data={"csrf_token": token(designer), "title": "x"},
    )
    assert missing.status_code == 422


def test_settings_of_a_node_use_the_panel_form_and_save_the_draft(designer, pid, db_session):
    page = designer.get(f"/designer/{pid}/outline/review").get_data(as_text=True)
    assert "Assign to" in page and 'name="revision" type="hidden" value="1"' in page
    response = designer.post(
        f"/designer/{pid}/outline/review",
        data={
            "csrf_token": token(designer), "element_id": "review", "kind": "userTask",
            "original": "{}", "revision": "1", "title": "Check", "assignee_type": "role",
            "assignee_role": "approver", "action": "apply",
        },
    )  # fmt: skip
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/outline#node-review")
    node = draft(db_session, pid)["nodes"]["review"]
    assert node["title"] == "Check"
    assert node["config"] == {"assignee": {"type": "role", "value": "approver"}}


def test_settings_of_a_flow_move_the_default(designer, pid, db_session):
    response = designer.post(
        f"/designer/{pid}/outline/f3",
        data={
            "csrf_token": token(designer), "element_id": "f3", "kind": "sequenceFlow",
            "original": "{}", "revision": "1", "title": "Yes", "condition": "",
            "default": "y", "source_kind": "exclusiveGateway", "action": "apply",
        },
        headers={"HX-Request": "true"},
    )  # fmt: skip
    assert response.status_code == 204
    assert response.headers["HX-Redirect"].endswith("#node-f3")
    flows = draft(db_session, pid)["flows"]
    assert flows["f3"]["default"] is True and flows["f3"]["condition"] is None
    assert flows["f4"]["default"] is False


def test_settings_errors_and_stale_revisions(designer, pid, db_session):
    base = {"csrf_token": token(designer), "element_id": "review", "kind": "userTask",
            "original": "{}", "title": "T", "assignee_type": "user", "action": "apply"}  # fmt: skip
    invalid = designer.post(
        f"/designer/{pid}/outline/review", data={**base, "revision": "1", "due_in": "x"}
    )
    assert invalid.status_code == 422
    assert "<html" in invalid.get_data(as_text=True), "a plain request gets a whole page"
    stale = designer.post(f"/designer/{pid}/outline/review", data={**base, "revision": "0"})
    assert stale.status_code == 409
    assert "saved by someone else" in stale.get_data(as_text=True)
    assert designer.get(f"/designer/{pid}/outline/ghost").status_code == 404
    assert get_process(db_session, pid).draft_revision == 1


def test_auto_layout_from_the_outline_and_from_the_canvas(designer, pid, db_session):
    response = post_edit(designer, f"/designer/{pid}/auto-layout")
    assert response.status_code == 302
    doc = draft(db_session, pid)
    xs = [doc["nodes"][n]["position"]["x"] for n in ("start", "review", "ok", "done")]
    assert xs == sorted(xs)
    canvas = designer.post(
        f"/designer/{pid}/auto-layout",
        data={"revision": 2},
        headers={"X-CSRFToken": token(designer), "Accept": "application/json"},
    )
    assert canvas.status_code == 200
    assert canvas.get_json()["revision"] == 3 and "<bpmn:definitions" in canvas.get_json()["xml"]
    stale = designer.post(
        f"/designer/{pid}/auto-layout",
        data={"revision": 2},
        headers={"X-CSRFToken": token(designer), "Accept": "application/json"},
    )
    assert stale.status_code == 409 and stale.get_json()["error"] == "draft.stale"


def test_outline_routes_are_partition_scoped(user_with, pid):
    outsider = user_with(["processes.edit"], ["hr"])
    assert outsider.get(f"/designer/{pid}/outline").status_code == 404
    assert (
        post_edit(outsider, f"/designer/{pid}/outline/nodes/done/rename", title="x").status_code
        == 404
    )


def test_the_outline_and_its_messages_name_nodes_by_title(designer, make_process):
    doc = approval_document()
    doc["nodes"]["ok"]["title"] = ""
    pid = make_process(doc=doc)
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    assert 'From: Start <span class="hint"><code>start</code></span>' in page
    assert (
        'To: Exclusive gateway after &#39;Review&#39; <span class="hint"><code>ok</code>' in page
    ), "an untitled node is named by its kind and neighbour, with its id"

    post_edit(designer, f"/designer/{pid}/outline/nodes/review/rename", title="Check budget")
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    assert "&#39;Review&#39; renamed to &#39;Check budget&#39;." in page
    post_edit(designer, f"/designer/{pid}/outline/flows", 2, source="start", target="ok")
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    assert (
        "Connected &#39;Start&#39; to the exclusive gateway after &#39;Check budget&#39;." in page
    ), "an untitled node by its kind and place, as problems name it"
    post_edit(designer, f"/designer/{pid}/outline/flows/f1/delete", 3)
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    assert "The flow from &#39;Start&#39; to &#39;Check budget&#39; deleted." in page
    post_edit(designer, f"/designer/{pid}/outline/nodes/done/delete", 4)
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    assert "&#39;Done&#39; and its flows deleted." in page


def test_connect_defaults_to_two_different_nodes_and_deletes_ask_first(designer, pid):
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    source = re.search(r'<select[^>]*name="source".*?</select>', page, re.S).group(0)
    target = re.search(r'<select[^>]*name="target".*?</select>', page, re.S).group(0)
    chosen = [re.search(r'<option selected value="([^"]*)"', s) for s in (source, target)]
    assert all(chosen), "both selects have a chosen node"
    assert chosen[0].group(1) != chosen[1].group(1)
    assert 'data-confirm="Delete “Review” and its flows?"' in page
    assert "confirm.js" in page


def scoped_document() -> dict:
    """start -> a sub-process 'Checks' (start -> check -> end, a timer on check) -> done."""
    return {
        "format_version": 1,
        "nodes": {
            "start": {"kind": "startEvent", "title": "Start", "position": {"x": 100, "y": 100}},
            "checks": {"kind": "subProcess", "title": "Checks", "position": {"x": 200, "y": 40}},
            "c_start": {"kind": "startEvent", "parent": "checks", "position": {"x": 230, "y": 100}},
            "c_check": {
                "kind": "userTask",
                "title": "Check the figures",
                "parent": "checks",
                "config": {"assignee": {"type": "role", "value": "clerk"}},
                "position": {"x": 300, "y": 78},
            },
            "c_end": {"kind": "endEvent", "parent": "checks", "position": {"x": 480, "y": 100}},
            "late": {
                "kind": "boundaryEvent",
                "title": "Late",
                "parent": "checks",
                "config": {"attachedTo": "c_check", "event": "timer", "duration": "P1D"},
                "position": {"x": 330, "y": 140},
            },
            "c_late": {"kind": "endEvent", "parent": "checks", "position": {"x": 400, "y": 200}},
            "done": {"kind": "endEvent", "title": "Done", "position": {"x": 640, "y": 100}},
        },
        "flows": {
            "f1": {"source": "start", "target": "checks"},
            "f2": {"source": "checks", "target": "done"},
            "c1": {"source": "c_start", "target": "c_check"},
            "c2": {"source": "c_check", "target": "c_end"},
            "c3": {"source": "late", "target": "c_late"},
        },
    }


def test_nodes_are_listed_by_scope_and_edited_there(designer, make_process, db_session):
    pid = make_process(doc=scoped_document())
    page = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    nested = re.search(r'aria-label="Inside Checks">(.*?)</ol>', page, re.S)
    assert nested is not None
    for node_id in ("c_start", "c_check", "c_end", "late"):
        assert f'id="node-{node_id}"' in nested.group(1), node_id
    assert 'id="node-done"' not in nested.group(1)
    assert "on Check the figures" in nested.group(1)
    assert "Check the figures (User task), in Checks" in page
    assert '<option value="checks">Checks (Sub-process)</option>' in page

    settings = designer.get(f"/designer/{pid}/outline/late").get_data(as_text=True)
    assert "Attached to User task &#39;Check the figures&#39;." in settings
    assert 'value="P1D"' in settings
    csrf = token(designer, f"/designer/{pid}/outline/late")
    response = designer.post(
        f"/designer/{pid}/outline/late",
        data={
            "csrf_token": csrf, "element_id": "late", "kind": "boundaryEvent", "revision": 1,
            "original": '{"attachedTo": "c_check", "duration": "P1D", "event": "timer"}',
            "title": "Late", "event": "timer", "timer_type": "cycle", "cycle": "R/P1D",
            "action": "apply",
        },
    )  # fmt: skip
    assert response.status_code == 302, response.get_data(as_text=True)
    late = draft(db_session, pid)["nodes"]["late"]
    assert late["parent"] == "checks"
    assert late["config"] == {
        "attachedTo": "c_check", "event": "timer", "interrupting": False, "cycle": "R/P1D",
    }  # fmt: skip


def test_add_a_node_inside_a_sub_process(designer, make_process, db_session):
    pid = make_process(doc=scoped_document())
    response = post_edit(
        designer, f"/designer/{pid}/outline/nodes", kind="serviceTask", title="Log", after="c_check"
    )
    assert response.status_code == 302
    doc = draft(db_session, pid)
    assert doc["nodes"]["serviceTask_1"]["parent"] == "checks"
    assert ("c_check", "serviceTask_1") in {
        (f["source"], f["target"]) for f in doc["flows"].values()
    }
    post_edit(designer, f"/designer/{pid}/outline/nodes", 2, kind="userTask", parent="checks")
    doc = draft(db_session, pid)
    assert doc["nodes"]["userTask_1"]["parent"] == "checks"
    inside = doc["nodes"]["checks"]["position"]
    assert doc["nodes"]["userTask_1"]["position"]["x"] >= inside["x"]
    refused = post_edit(
        designer,
        f"/designer/{pid}/outline/nodes",
        3,
        kind="userTask",
        parent="checks",
        after="done",
    )
    assert refused.status_code == 422
    assert "flows only join nodes of the same scope" in refused.get_data(as_text=True)
    assert (
        post_edit(
            designer, f"/designer/{pid}/outline/nodes", 3, kind="userTask", parent="c_check"
        ).status_code
        == 422
    )
    assert "boundaryEvent" not in designer.get(f"/designer/{pid}/outline").get_data(as_text=True)


def test_deleting_a_sub_process_deletes_what_is_inside(designer, make_process, db_session):
    pid = make_process(doc=scoped_document())
    response = post_edit(designer, f"/designer/{pid}/outline/nodes/checks/delete")
    assert response.status_code == 302
    doc = draft(db_session, pid)
    assert set(doc["nodes"]) == {"start", "done"}
    assert doc["flows"] == {}
    follow = designer.get(f"/designer/{pid}/outline").get_data(as_text=True)
    assert "with the 5 nodes inside or attached to it" in follow
    pid2 = make_process("second", doc=scoped_document())
    post_edit(designer, f"/designer/{pid2}/outline/nodes/c_check/delete")
    assert "late" not in draft(db_session, pid2)["nodes"], "its boundary event goes with it"
