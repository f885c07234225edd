"""The verdict one instance's positions get when its process moves to another version: what
maps by itself, what needs the operator's mapping, and what is refused with its reason."""

from __future__ import annotations

from webapp.process.migration import (
    AS_IS,
    CANNOT,
    MAPPED,
    Plan,
    Positions,
    TokenAt,
    candidates,
    check_mapping,
)


def n(kind: str, title: str = "", parent: str | None = None, **config) -> dict:
    node = {"kind": kind, "title": title, "config": config}
    if parent:
        node["parent"] = parent
    return node


def plan(old: dict, new: dict, mapping: dict | None = None, flows: dict | None = None) -> Plan:
    return Plan(old=old, new=new, mapping=mapping or {}, was=1, to=2, new_flows=flows or {})


def at(*tokens: TokenAt, **rest) -> Positions:
    return Positions(tokens=tokens, **rest)


TASK = n("userTask", "Review", form={"fields": [{"key": "ok", "type": "boolean"}]})


def test_same_ids_map_to_themselves_and_removed_ones_need_a_mapping():
    old = {"review": TASK, "wait": n("timerCatch", "Wait")}
    new = {"approve": n("userTask", "Review it"), "wait": n("timerCatch", "Wait")}
    the_plan = plan(old, new)
    assert the_plan.verdict(at(TokenAt(1, "wait", None))).outcome == AS_IS
    refused = the_plan.verdict(at(TokenAt(1, "review", None)))
    assert refused.outcome == CANNOT
    assert refused.reason == (
        "It waits at user task 'Review', which v2 no longer has; choose a mapping."
    )
    mapped = plan(old, new, {"review": "approve"}).verdict(at(TokenAt(1, "review", None)))
    assert (mapped.outcome, mapped.used) == (MAPPED, (("review", "approve"),))


def test_a_mapping_to_another_kind_or_a_missing_node_is_refused_naming_both():
    old = {"review": TASK}
    new = {"wait": n("timerCatch", "Wait"), "approve": n("userTask", "Approve")}
    assert check_mapping(old, new, {"review": "wait"}, 2, 1) == {
        "review": "'review' is a user task and 'wait' in v2 is a timer: map it to a user task."
    }
    assert check_mapping(old, new, {"review": "nope"}, 2, 1) == {
        "review": "v2 has no node 'nope' to map 'review' to."
    }
    assert check_mapping(old, new, {"ghost": "approve"}, 2, 1) == {
        "ghost": "v1 has no node 'ghost'."
    }
    assert check_mapping(old, new, {"review": "approve"}, 2, 1) == {}


def test_candidates_are_the_same_kind_closest_title_first():
    old = {"review": TASK}
    new = {
        "zzz": n("userTask", "Something else"),
        "approve": n("userTask", "Review offer"),
        "wait": n("timerCatch", "Review"),
    }
    assert candidates(old, new, "review") == ["approve", "zzz"]


def test_a_token_whose_node_moved_into_a_sub_process_is_refused():
    old = {"review": TASK}
    new = {"sub": n("subProcess", "Sub"), "review": {**TASK, "parent": "sub"}}
    verdict = plan(old, new).verdict(at(TokenAt(1, "review", None)))
    assert verdict.reason == (
        "User task 'Review' is inside sub-process 'Sub' in v2, but the token is at the "
        "process level; moving tokens between scopes is token modification."
    )


def test_a_multi_instance_body_whose_collection_changed_is_refused():
    before = n("userTask", "Review", multiInstance={"collection": "$vars.people"})
    after = n("userTask", "Review", multiInstance={"collection": "$vars.others"})
    body = TokenAt(1, "review", None, body=True)
    one = TokenAt(2, "review", 1, instance=True)
    verdict = plan({"review": before}, {"review": after}).verdict(at(body, one))
    assert verdict.reason == "The collection of multi-instance user task 'Review' changed in v2."
    same = plan({"review": before}, {"review": before}).verdict(at(body, one))
    assert same.outcome == AS_IS


def test_a_call_activity_bound_to_another_version_is_refused():
    old = {"call": n("callActivity", "Order", process="parts", binding="latest")}
    new = {"call": n("callActivity", "Order", process="parts", binding="version", version=3)}
    verdict = plan(old, new).verdict(at(TokenAt(1, "call", None)))
    assert verdict.outcome == CANNOT and "is bound to a version (parts v3 in v2)" in verdict.reason


def test_a_task_holding_a_value_for_a_field_the_new_form_lost_is_refused():
    new = {"review": n("userTask", "Review", form={"fields": [{"key": "note", "type": "text"}]})}
    positions = at(TokenAt(1, "review", None), tasks=(("review", ("ok",)),))
    verdict = plan({"review": TASK}, new).verdict(positions)
    assert verdict.reason == (
        "Its task at user task 'Review' holds a value for field 'ok', which the form in v2 no "
        "longer has."
    )


def test_a_boundary_timer_stays_with_its_host_and_a_new_boundary_is_refused():
    old = {"review": TASK, "late": n("boundaryEvent", "Late", attachedTo="review")}
    moved = {"review": TASK, "late": n("boundaryEvent", "Late", attachedTo="other"),
             "other": n("userTask", "Other")}  # fmt: skip
    positions = at(TokenAt(1, "review", None), jobs=(("late", 1),))
    assert plan(old, old).verdict(positions).outcome == AS_IS
    assert "does not belong to user task 'Review'" in plan(old, moved).verdict(positions).reason
    gained = {**old, "remind": n("boundaryEvent", "Remind", attachedTo="review")}
    verdict = plan(old, gained).verdict(positions)
    assert "gains boundary event 'Remind' in v2" in verdict.reason
