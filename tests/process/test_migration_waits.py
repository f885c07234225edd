"""What a migration makes wait differently: subscriptions whose message or signal changed in the
new version, event sub-processes the new version adds, and boundary events added to a
multi-instance body."""

from __future__ import annotations

from webapp.process.migration import AS_IS, CANNOT, Plan, Positions, TokenAt


def n(kind: str, title: str = "", parent: str | None = None, **config) -> dict:
    node = {"kind": kind, "title": title, "config": config}
    if parent:
        node["parent"] = parent
    return node


def plan(old: dict, new: dict, mapping: dict | None = None) -> Plan:
    return Plan(old=old, new=new, mapping=mapping or {}, was=1, to=2)


PAID = n("messageCatch", "Paid", message="paid", correlationKey="$input.order")


def test_a_changed_message_name_or_correlation_expression_is_a_changed_wait():
    renamed = plan({"paid": PAID}, {"paid": n("messageCatch", "Paid", message="settled",
                                              correlationKey="$input.order")})  # fmt: skip
    assert renamed.wait_changed("paid")
    rekeyed = plan({"paid": PAID}, {"paid": n("messageCatch", "Paid", message="paid",
                                              correlationKey="$input.invoice")})  # fmt: skip
    assert rekeyed.wait_changed("paid")
    retitled = plan({"paid": PAID}, {"paid": {**PAID, "title": "Payment in"}})
    assert not retitled.wait_changed("paid")
    mapped = plan({"paid": PAID}, {"in": n("messageCatch", message="in")}, {"paid": "in"})
    assert mapped.wait_changed("paid")


def test_event_subprocesses_the_new_version_adds_are_listed_by_scope():
    old = {
        "work": n("subProcess", "Work"),
        "kept": n("eventSubProcess", "Kept"),
        "renamed": n("eventSubProcess", "Renamed"),
    }
    new = {
        "work": n("subProcess", "Work"),
        "kept": n("eventSubProcess", "Kept"),
        "renamed_too": n("eventSubProcess", "Renamed"),
        "chase": n("eventSubProcess", "Chase"),
        "inner": n("eventSubProcess", "Inner", parent="work"),
    }
    the_plan = plan(old, new, {"renamed": "renamed_too"})
    assert the_plan.added_event_subprocesses() == {None: ["chase"], "work": ["inner"]}
    assert plan(old, old).added_event_subprocesses() == {}


def test_a_boundary_event_added_to_a_multi_instance_body_is_refused():
    mi = {"collection": "$input.people"}
    old = {"vote": n("userTask", "Vote", multiInstance=mi)}
    new = {**old, "late": n("boundaryEvent", "Late", attachedTo="vote", event="timer")}
    body = TokenAt(1, "vote", None, body=True)
    inner = TokenAt(2, "vote", 1, instance=True)
    refused = plan(old, new).verdict(Positions(tokens=(body, inner)))
    assert refused.outcome == CANNOT
    assert refused.reason == (
        "User task 'Vote' gains boundary event 'Late' in v2, which would not start for a token "
        "already waiting there."
    )
    assert plan(old, old).verdict(Positions(tokens=(body, inner))).outcome == AS_IS
