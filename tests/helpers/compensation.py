"""Documents with compensation the engine, differential and browser tests share, and what they
read back: the handlers an instance ran, in order."""

from __future__ import annotations

from typing import Any

from tests.helpers.documents import document, node, wire


def handler(script: str, title: str = "Undo") -> dict[str, Any]:
    """A script task that undoes something: a handler has no sequence flows."""
    return node("scriptTask", title, script=script)


def booking(what: str, script: str) -> dict[str, dict[str, Any]]:
    """`book_<what>` (a script task) with a compensation boundary whose handler `undo_<what>`
    sets `refund_<what>` to the booking's `$vars.price_now`."""
    return {
        f"book_{what}": node("scriptTask", f"Book {what}", script=script),
        f"comp_{what}": node(
            "boundaryEvent", event="compensate", attachedTo=f"book_{what}", handler=f"undo_{what}"
        ),
        f"undo_{what}": handler(f"refund_{what} = $vars.price_now", f"Cancel {what}"),
    }


def saga(*, change_after: bool = False, throws: int = 1, activity: str = "") -> dict[str, Any]:
    """start -> book flight -> book hotel -> compensation throw(s) -> end."""
    nodes = {
        "start": node("startEvent"),
        **booking("flight", "price_now = $input.price"),
        **booking("hotel", "price_now = $input.price * 2"),
    }
    order = ["start", "book_flight", "book_hotel"]
    if change_after:
        nodes["later"] = node("scriptTask", "Later", script="price_now = 100")
        order.append("later")
    for number in range(throws):
        config = {"activity": activity} if activity else {}
        nodes[f"throw{number}"] = node("compensationThrow", "Undo", **config)
        order.append(f"throw{number}")
    nodes["end"] = node("endEvent")
    order.append("end")
    return document(nodes, wire(*order))


def entered_nodes(session, instance_id: int) -> list[str]:
    """Every node an instance's tokens entered, in order (with repeats)."""
    from sqlalchemy import select

    from webapp.models import HistoryEntry

    session.rollback()
    rows = session.execute(
        select(HistoryEntry.node_id)
        .where(HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "entered")
        .order_by(HistoryEntry.id)
    ).scalars()
    return [n for n in rows if n]


def compensated_in_order(session, instance_id: int) -> list[str]:
    """The handlers (and compensation event sub-processes) an instance entered, in order."""
    from sqlalchemy import select

    from webapp.models import HistoryEntry

    session.rollback()
    rows = session.execute(
        select(HistoryEntry.node_id)
        .where(HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "entered")
        .order_by(HistoryEntry.id)
    ).scalars()
    return [n for n in rows if n and (n.startswith("undo") or n == "esp")]
