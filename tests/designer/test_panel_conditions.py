"""The properties panel for conditional events and standard loops: a conditional catch, a
conditional boundary event, a conditional process start and an activity's loop are configured
and checked on the server (a refused value names its field, nothing is applied)."""

from __future__ import annotations

import json
import re
from html import unescape

from tests.helpers.designer import (
    HX,
    applied,
    html_of,
    incomplete,
    node,
    panel_post,
    refused,
    token,
)


def test_a_conditional_catch_takes_its_condition_and_watch_list(designer, pid):
    html = unescape(html_of(designer, pid, "conditionalCatch"))
    assert "Condition" in html and "Only when these variables change" in html
    csrf = token(designer, f"/designer/{pid}/")
    done = applied(
        panel_post(
            designer,
            pid,
            node("conditionalCatch", condition=" $vars.ok == true ", watch="ok, level"),
            csrf,
        )
    )
    assert done["config"] == {"condition": "$vars.ok == true", "watch": "ok,level"}
    assert "Enter an expression" in incomplete(
        panel_post(designer, pid, node("conditionalCatch", condition=""), csrf)
    )
    bad = unescape(
        refused(panel_post(designer, pid, node("conditionalCatch", condition="1 +", watch="2x")))
    )
    assert "Not a valid expression" in bad and "'2x' is not a variable name" in bad


def test_a_conditional_boundary_event_is_interrupting_or_not(designer, pid):
    original = json.dumps({"attachedTo": "review"})
    fields = {"event": "conditional", "condition": "$vars.n != null and $vars.n > 2"}
    done = applied(panel_post(designer, pid, node("boundaryEvent", original=original, **fields)))
    assert done["config"] == {
        "attachedTo": "review",
        "event": "conditional",
        "interrupting": False,
        "condition": "$vars.n != null and $vars.n > 2",
    }
    html = unescape(html_of(designer, pid, "boundaryEvent", {"attachedTo": "review", **fields}))
    assert "A condition on the data" in html and "$vars.n &gt; 2" not in html


def test_a_conditional_process_start_names_the_api(designer, pid):
    html = unescape(html_of(designer, pid, "startEvent", {"event": "conditional"}))
    assert "POST /api/conditions" in html
    done = applied(
        panel_post(designer, pid, node("startEvent", event="conditional", condition="$input.go"))
    )
    assert done["config"] == {"event": "conditional", "condition": "$input.go"}


def test_an_activity_loops_with_a_condition_and_a_maximum(designer, pid):
    fields = {"tool": "noop", "mi_mode": "loop", "loop_condition": "$loop.index < 3"}
    fields |= {"loop_maximum": "5", "retries": "3", "backoff": "2", "timeout": "30"}
    done = applied(panel_post(designer, pid, node("serviceTask", **fields)))
    assert done["config"]["loop"] == {
        "testBefore": False,
        "condition": "$loop.index < 3",
        "maximum": 5,
    }
    assert "multiInstance" not in done["config"]
    html = unescape(html_of(designer, pid, "serviceTask", {"tool": "noop", "loop": {"maximum": 5}}))
    assert "Test before each run" in html
    assert re.search(r'<input checked[^>]*value="loop"', html)
    missing = panel_post(designer, pid, node("serviceTask", tool="noop", mi_mode="loop"))
    assert "Enter a loop condition or a maximum" in unescape(incomplete(missing))


def test_the_live_check_reads_a_loop_condition_with_its_loop(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")

    def check(field, text):
        return designer.post(
            f"/designer/{pid}/check-expression?element=review&field={field}",
            data={field: text},
            headers={**HX, "X-CSRFToken": csrf},
        ).get_data(as_text=True)

    assert "Valid expression" in check("loop_condition", "$loop.index < 3")
    assert "exists only inside" not in check("loop_condition", "$loop.index < 3")
    assert "no step in the process saves" in unescape(check("loop_condition", "$vars.nope > 1"))
