"""The properties panel for compensation and transactions: the compensation throw's activity and
waiting, compensation and cancel ends, compensation and cancel boundary events (the handler, set
by the diagram's association, is kept), and the transaction. Each field is checked on the
server; a refused value names the field and nothing is applied."""

from __future__ import annotations

import json

from tests.helpers.designer import applied, html_of, node, panel_post, refused, token


def test_each_compensation_kind_gets_its_form(designer, pid):
    cases = {
        "compensationThrow": ["Activity to compensate (its id)", "Wait for the handlers"],
        "transaction": ["A cancel end event inside undoes", "Multi-instance"],
    }
    for kind, texts in cases.items():
        html = html_of(designer, pid, kind)
        for text in texts:
            assert text in html, (kind, text)
    end = html_of(designer, pid, "endEvent", {"event": "compensate"})
    assert "Activity to compensate (its id)" in end
    cancel = html_of(designer, pid, "endEvent", {"event": "cancel"})
    assert "directly inside a transaction" in cancel
    boundary = html_of(
        designer, pid, "boundaryEvent", {"attachedTo": "review", "event": "compensate"}
    )
    assert "by an association" in boundary


def test_a_compensation_throw_names_an_activity_and_may_not_wait(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    plain = applied(
        panel_post(designer, pid, node("compensationThrow", wait_for_completion="y"), csrf)
    )
    assert plain["config"] == {}
    one = applied(
        panel_post(
            designer,
            pid,
            node("compensationThrow", activity=" review ", wait_for_completion=""),
            csrf,
        )
    )
    assert one["config"] == {"activity": "review", "waitForCompletion": False}
    assert "Enter the id of an activity" in refused(
        panel_post(designer, pid, node("compensationThrow", activity="not an id"), csrf)
    )


def test_compensation_and_cancel_ends(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    end = applied(
        panel_post(
            designer, pid, node("endEvent", event="compensate", activity="review",
                                wait_for_completion="y"), csrf,
        )
    )  # fmt: skip
    assert end["config"] == {"event": "compensate", "activity": "review"}
    cancel = applied(panel_post(designer, pid, node("endEvent", event="cancel"), csrf))
    assert cancel["config"] == {"event": "cancel"}
    original = json.dumps({"event": "compensate", "activity": "review"})
    plain = applied(panel_post(designer, pid, node("endEvent", event="", original=original), csrf))
    assert plain["config"] == {}


def test_a_compensation_boundary_keeps_its_handler_and_always_interrupts(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    original = json.dumps({"attachedTo": "review", "event": "compensate", "handler": "undo"})
    kept = applied(
        panel_post(
            designer, pid, node("boundaryEvent", original=original, event="compensate"), csrf
        )
    )
    assert kept["config"] == {
        "attachedTo": "review", "event": "compensate", "interrupting": True, "handler": "undo",
    }  # fmt: skip
    timer = applied(
        panel_post(
            designer, pid,
            node("boundaryEvent", original=original, event="timer", interrupting="y",
                 duration="PT1H"), csrf,
        )
    )  # fmt: skip
    assert "handler" not in timer["config"]
    cancel = applied(
        panel_post(designer, pid, node("boundaryEvent", original=original, event="cancel"), csrf)
    )
    assert cancel["config"] == {"attachedTo": "review", "event": "cancel", "interrupting": True}
