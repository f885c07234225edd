"""The properties panel for the later kinds and events: signals, message throws and ends,
links, milestones, script, send, receive and manual tasks, inclusive and event-based gateways and
process-level message, timer and signal starts. Every setting is checked on the server: a refused
value names its field (422) and nothing is applied; a timer start previews its next five runs."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html import unescape

import pytest

from tests.helpers.designer import HX, applied, get_process, node, panel_get, panel_post, token
from tests.helpers.designer import html_of as raw_html_of
from tests.helpers.designer import incomplete as raw_incomplete
from tests.helpers.designer import refused as raw_refused
from tests.helpers.documents import approval_document


def html_of(*args, **kwargs) -> str:
    return unescape(raw_html_of(*args, **kwargs))


def refused(response) -> str:
    return unescape(raw_refused(response))


def incomplete(response) -> str:
    return unescape(raw_incomplete(response))


def test_each_new_kind_gets_its_section(designer, pid):
    cases = {
        "signalCatch": ["Signal name", "Save the signal's payload as"],
        "signalThrow": ["Signal name", "Payload", "Add entry"],
        "messageThrow": ["Message name", "Tool", "Retries", "send_message"],
        "sendTask": ["Message name", "Tool", "Timeout", "Multi-instance"],
        "receiveTask": ["Message name", "Correlation key", "Save the message as",
                        "Multi-instance"],
        "linkThrow": ["Link name"],
        "linkCatch": ["Link name"],
        "milestone": ["recorded in the instance's history"],
        "scriptTask": ["Script", "Language: Flowdesk expressions", "Multi-instance"],
        "manualTask": ["passes straight through, as in Camunda 8", "use a user task instead"],
        "inclusiveGateway": ["every outgoing flow whose condition is true"],
        "eventBasedGateway": ["Its flows carry no conditions", "receive tasks"],
    }  # fmt: skip
    for kind, texts in cases.items():
        html = html_of(designer, pid, kind)
        for text in texts:
            assert text in html, (kind, text)


def test_signal_catch_and_throw_settings(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    catch = applied(panel_post(designer, pid, node("signalCatch", signal=" go ", save_to="got")))
    assert catch["config"] == {"signal": "go", "saveTo": "got"}
    assert "Enter the signal's name" in incomplete(
        panel_post(designer, pid, node("signalCatch", signal="  "), csrf)
    )
    rows = {"payload-0-name": "order", "payload-0-expression": "$input.id"}
    rows |= {"payload-1-name": "", "payload-1-expression": ""}
    thrown = applied(panel_post(designer, pid, node("signalThrow", signal="go", **rows), csrf))
    assert thrown["config"] == {"signal": "go", "payload": {"order": "$input.id"}}
    bad = refused(
        panel_post(
            designer,
            pid,
            node("signalThrow", signal="go", **{"payload-0-name": "1x",
                                                 "payload-0-expression": "1 +"}),
            csrf,
        )
    )  # fmt: skip
    assert "Name the payload entry with letters" in bad and "Not a valid expression" in bad
    added = panel_post(designer, pid, node("signalThrow", action="payload-add", **rows), csrf)
    assert added.status_code == 200 and 'name="payload-2-name"' in added.get_data(as_text=True)
    removed = panel_post(designer, pid, node("signalThrow", action="payload-remove-0", **rows))
    html = removed.get_data(as_text=True)
    assert "$input.id" not in html and 'name="payload-0-name"' in html


def test_tool_calling_kinds_share_the_service_tasks_tool_section(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    tool = {"tool": "email.send", "inputs-0-name": "to", "inputs-0-expression": "'a@b.c'"}
    tool |= {"retries": "2", "backoff": "1", "timeout": "10", "save_to": "sent"}
    expected = {
        "tool": "email.send",
        "inputs": {"to": "'a@b.c'"},
        "retries": 2,
        "backoff": 1,
        "timeout": 10,
        "saveTo": "sent",
        "message": "order-shipped",
    }
    for kind in ("sendTask", "messageThrow"):
        done = applied(panel_post(designer, pid, node(kind, message="order-shipped", **tool), csrf))
        assert done["config"] == expected, kind
    end = applied(
        panel_post(designer, pid, node("endEvent", event="message", message="order-shipped",
                                       **tool), csrf)
    )  # fmt: skip
    assert end["config"] == {**expected, "event": "message"}
    for kind, extra in (("sendTask", {}), ("endEvent", {"event": "message"})):
        data = node(kind, **{**tool, "retries": "-1"}, **extra)
        bad = refused(panel_post(designer, pid, data, csrf))
        assert "Use a whole number from 0 to 100." in bad
        unknown = refused(panel_post(designer, pid, node(kind, tool="nope", **extra), csrf))
        assert "There is no tool called" in unknown
    chosen = panel_post(
        designer, pid, node("messageThrow", action="refresh", tool="email.send"), csrf
    ).get_data(as_text=True)
    assert re.search(r"<label[^>]*>to <span class=\"req\">\(required\)", chosen), chosen


def test_signal_end_and_switching_an_end_drops_the_old_settings(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    rows = {"payload-0-name": "why", "payload-0-expression": "'late'"}
    end = applied(panel_post(designer, pid, node("endEvent", event="signal", signal="stop",
                                                 **rows), csrf))  # fmt: skip
    assert end["config"] == {"event": "signal", "signal": "stop", "payload": {"why": "'late'"}}
    original = json.dumps(end["config"])
    plain = applied(panel_post(designer, pid, node("endEvent", event="", original=original), csrf))
    assert plain["config"] == {}
    assert "Enter the signal's name" in incomplete(
        panel_post(designer, pid, node("endEvent", event="signal"), csrf)
    )


def test_receive_task_link_and_script(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    receive = applied(
        panel_post(designer, pid, node("receiveTask", message="paid", correlation_key="$input.id",
                                       save_to="payment"), csrf)
    )  # fmt: skip
    assert receive["config"] == {"message": "paid", "correlationKey": "$input.id",
                                 "saveTo": "payment"}  # fmt: skip
    assert "Not a valid expression" in refused(
        panel_post(designer, pid, node("receiveTask", message="paid", correlation_key="$x +"))
    )
    link = applied(panel_post(designer, pid, node("linkThrow", link="to-end"), csrf))
    assert link["config"] == {"link": "to-end"}
    assert "Enter the link's name" in incomplete(
        panel_post(designer, pid, node("linkCatch", link=""), csrf)
    )
    script = "# totals\ntotal = $input.price * $input.qty\n\n$vars.net = $vars.total * 0.8\n"
    done = applied(panel_post(designer, pid, node("scriptTask", script=script), csrf))
    assert done["config"] == {"script": script, "language": "flowdesk"}
    bad = refused(
        panel_post(designer, pid, node("scriptTask", script="a = 1\nb == 2\n3x = 1\nc = (1"))
    )
    assert "Line 2: expected 'name = expression'" in bad
    assert "'==' compares, '=' assigns" in bad
    assert "Line 3: expected 'name = expression'" in bad
    assert "Line 4: in the value of 'c': missing ')'" in bad


def test_a_foreign_script_is_kept_and_the_panel_says_publishing_refuses_it(designer, pid):
    config = {"language": "groovy", "script": "def x = 1"}
    html = html_of(designer, pid, "scriptTask", config)
    assert (
        "Flowdesk runs only its own expression assignments; this script's language is "
        "groovy: rewrite it or publishing refuses it" in html
    )
    done = applied(
        panel_post(designer, pid, node("scriptTask", language="groovy", script="def x = 1"))
    )
    assert done["config"] == config


def test_inclusive_gateway_flows_take_conditions_and_a_default(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    html = panel_get(
        designer, pid, id="f3", kind="sequenceFlow", condition="", default="0",
        source_kind="inclusiveGateway",
    ).get_data(as_text=True)  # fmt: skip
    assert "Condition" in html and "Default flow" in html
    flow = {"element_id": "f3", "kind": "sequenceFlow", "original": "{}", "title": ""}
    flow |= {"source_kind": "inclusiveGateway", "action": "apply"}
    done = applied(panel_post(designer, pid, {**flow, "condition": "$input.a > 1"}, csrf))
    assert done["condition"] == "$input.a > 1" and done["default"] is False
    default = applied(panel_post(designer, pid, {**flow, "default": "y", "condition": "1"}, csrf))
    assert default["default"] is True and default["condition"] is None
    assert "Not a valid expression" in refused(
        panel_post(designer, pid, {**flow, "condition": "$input.a >"}, csrf)
    )
    event = panel_get(
        designer, pid, id="f3", kind="sequenceFlow", condition="", default="0",
        source_kind="eventBasedGateway",
    ).get_data(as_text=True)  # fmt: skip
    assert "carries no condition" in event and 'name="condition"' not in event
    ignored = applied(panel_post(designer, pid, {**flow, "source_kind": "eventBasedGateway",
                                                 "default": "y"}, csrf))  # fmt: skip
    assert ignored["default"] is False


def test_process_start_by_message_or_signal(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    html = html_of(designer, pid, "startEvent")
    assert "Started by" in html and "Add field" in html
    assert '<option selected value="">Someone starting it' in html
    message = applied(panel_post(designer, pid, node("startEvent", event="message",
                                                     message="order"), csrf))  # fmt: skip
    assert message["config"] == {"event": "message", "message": "order"}
    signal = applied(panel_post(designer, pid, node("startEvent", event="signal", signal="go")))
    assert signal["config"] == {"event": "signal", "signal": "go"}
    assert "Enter the message's name" in incomplete(
        panel_post(designer, pid, node("startEvent", event="message"), csrf)
    )
    assert "Choose one of the listed ways to start." in refused(
        panel_post(designer, pid, node("startEvent", event="error", code="E"), csrf)
    )
    form = {"fields-0-key": "amount", "fields-0-label": "Amount", "fields-0-type": "number"}
    none = applied(panel_post(designer, pid, node("startEvent", event="", **form), csrf))
    assert none["config"]["form"]["fields"][0]["key"] == "amount"
    original = json.dumps(none["config"])
    moved = applied(panel_post(designer, pid, node("startEvent", event="signal", signal="go",
                                                   original=original), csrf))  # fmt: skip
    assert moved["config"] == {"event": "signal", "signal": "go"}


def next_runs(html: str) -> list[str]:
    return re.findall(r'<time datetime="([^"]+)">', html)


def test_timer_start_shows_its_next_five_runs(designer, pid):
    csrf = token(designer, f"/designer/{pid}/")
    config = {"event": "timer", "cycle": "R/2030-01-01T08:00:00Z/P1D"}
    runs = next_runs(html_of(designer, pid, "startEvent", config))
    assert runs == [f"2030-01-0{d}T08:00:00+00:00" for d in range(1, 6)]
    cron = {"event": "timer", "timer_type": "cycle", "cycle": "0 8 * * MON-FRI"}
    cron |= {"timezone": "Europe/Berlin"}
    done = panel_post(designer, pid, node("startEvent", **cron), csrf)
    assert applied(done)["config"] == {
        "event": "timer",
        "cycle": "0 8 * * MON-FRI",
        "timezone": "Europe/Berlin",
    }
    html = done.get_data(as_text=True)
    shown = [datetime.fromisoformat(run) for run in next_runs(html)]
    assert len(shown) == 5 and all(run > datetime.now(UTC) for run in shown)
    assert all(run.hour in (6, 7) and run.weekday() < 5 for run in shown)  # 08:00 in Berlin
    assert "08:00 Europe/Berlin" in html
    date = {"event": "timer", "timer_type": "date", "date": "2031-05-01T10:00:00"}
    once = panel_post(designer, pid, node("startEvent", **date, timezone="UTC"), csrf)
    assert applied(once)["config"] == {"event": "timer", "date": "2031-05-01T10:00:00",
                                       "timezone": "UTC"}  # fmt: skip
    assert next_runs(once.get_data(as_text=True)) == ["2031-05-01T10:00:00+00:00"]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"cycle": "every day"}, "cycle", "is neither an ISO repeating interval"),
        ({"cycle": "61 * * * *"}, "cycle", "invalid cron expression"),
        ({"cycle": "R/PT0S"}, "cycle", "Cycle"),
        ({"cycle": "0 8 * * *", "timezone": "Mars/Olympus"}, "timezone", "unknown time zone"),
        ({"cycle": "0 8 * * *", "timezone": "../etc"}, "timezone", "is not an IANA time zone"),
        ({"timer_type": "date", "date": "tomorrow"}, "date", "is not an ISO date-time"),
        ({"cycle": ""}, "cycle", "Enter a schedule for the timer start"),
        ({"cycle": "R/PT1H" + " " * 200}, "cycle", "Field cannot be longer"),
    ],
)
def test_a_bad_timer_start_names_its_field(designer, pid, fields, field, message):
    data = node("startEvent", event="timer", **{"timer_type": "cycle", **fields})
    response = panel_post(designer, pid, data)
    html = incomplete(response) if fields == {"cycle": ""} else refused(response)
    error = re.search(rf'<p class="error" id="{field}-msg">([^<]*)</p>', html)
    assert error and message.lower() in error.group(1).lower().replace("'", "'"), html
    assert "Next runs" in html


@pytest.mark.parametrize(
    "cycle", ["R/9999-12-31T23:59:59Z/P1D", "R/0001-01-01T00:00:00Z/PT1S", "R/P99999999Y"]
)
@pytest.mark.parametrize("timezone", ["", "Europe/Berlin", "America/St_Johns"])
def test_timer_starts_at_the_edges_of_time_never_crash_the_panel(designer, pid, cycle, timezone):
    config = {"event": "timer", "cycle": cycle, "timezone": timezone}
    assert "Next runs" in html_of(designer, pid, "startEvent", config)
    data = node("startEvent", event="timer", timer_type="cycle", cycle=cycle, timezone=timezone)
    response = panel_post(designer, pid, data)
    assert response.status_code in (200, 422), response.status_code
    assert "Next runs" in response.get_data(as_text=True)


def test_names_used_in_the_process_are_offered(designer, pid, make_process):
    html = html_of(designer, pid, "signalThrow", signals="go\nstop\n", messages="paid")
    signals = re.search(r'<datalist id="signal-names">(.*?)</datalist>', html, re.S)
    assert signals and re.findall(r'value="([^"]+)"', signals.group(1)) == ["go", "stop"]
    receive = html_of(designer, pid, "receiveTask", signals="go", messages="paid\npaid\n")
    messages = re.search(r'<datalist id="message-names">(.*?)</datalist>', receive, re.S)
    assert messages and re.findall(r'value="([^"]+)"', messages.group(1)) == ["paid"]
    assert 'list="message-names"' in receive
    # Applying keeps offering them; the outline offers those of the saved draft.
    data = node("signalCatch", signal="go", names=json.dumps({"signal": ["go", "stop"]}))
    again = panel_post(designer, pid, data).get_data(as_text=True)
    assert '<option value="stop">' in again
    doc = approval_document()
    doc["nodes"]["wait"] = {
        "kind": "signalCatch",
        "title": "Wait",
        "config": {"signal": "order-cancelled"},
        "position": {"x": 600, "y": 100},
    }
    other = make_process("signals", doc=doc)
    outline = designer.get(f"/designer/{other}/outline/wait").get_data(as_text=True)
    assert '<option value="order-cancelled">' in outline


def test_the_outline_saves_new_settings_into_the_draft(designer, make_process, db_session):
    doc = approval_document()
    doc["nodes"]["wait"] = {
        "kind": "signalCatch",
        "title": "Wait",
        "config": {"signal": "go"},
        "position": {"x": 600, "y": 100},
    }
    pid = make_process("outline_signals", doc=doc)
    path = f"/designer/{pid}/outline/wait"
    revision = get_process(db_session, pid).draft_revision
    data = {"element_id": "wait", "kind": "signalCatch", "title": "Wait for it"}
    data |= {"original": json.dumps({"signal": "go"}), "revision": str(revision)}
    data |= {"signal": "order-cancelled", "save_to": "why", "action": "apply"}
    response = designer.post(path, data={**data, "csrf_token": token(designer, path)})
    assert response.status_code == 302, response.get_data(as_text=True)
    node = get_process(db_session, pid).draft_document["nodes"]["wait"]
    assert node["kind"] == "signalCatch" and node["title"] == "Wait for it"
    assert node["config"] == {"signal": "order-cancelled", "saveTo": "why"}


def test_panel_posts_need_the_csrf_token(designer, pid):
    data = node("signalCatch", signal="go")
    response = designer.post(f"/designer/{pid}/panel", data=data, headers=HX)
    assert response.status_code == 400
    assert "HX-Trigger" not in response.headers


def test_a_bad_config_in_the_query_never_crashes_a_new_panel(designer, pid):
    weird = {"signal": 5, "payload": [1], "script": {"x": 1}, "cycle": None, "timezone": 3}
    for kind in ("signalThrow", "scriptTask", "endEvent", "sendTask", "startEvent"):
        assert "panel-body" in html_of(designer, pid, kind, {**weird, "event": "timer"})
    assert "panel-body" in html_of(designer, pid, "startEvent", {"event": "timer", "cycle": 7})


HOSTILE = ["", " ", "\x01\x02", "x" * 30_000, "$input.", "'", "1 +", "R/", "0 8 * *", "∞", "ß" * 70]
NEW_KINDS = [
    "signalCatch", "signalThrow", "messageThrow", "sendTask", "receiveTask", "linkThrow",
    "linkCatch", "milestone", "scriptTask", "manualTask", "inclusiveGateway",
    "eventBasedGateway", "startEvent", "endEvent", "boundaryEvent",
]  # fmt: skip
FIELDS = [
    "title", "signal", "message", "link", "script", "language", "save_to", "correlation_key",
    "tool", "retries", "backoff", "timeout", "event", "timer_type", "date", "cycle", "timezone",
    "duration", "code", "payload-0-name", "payload-0-expression", "inputs-0-name",
    "inputs-0-expression", "names", "original", "mi_mode", "interrupting",
]  # fmt: skip


@pytest.mark.parametrize("kind", NEW_KINDS)
def test_hostile_values_get_field_errors_never_a_server_error(designer, pid, kind):
    csrf = token(designer, f"/designer/{pid}/")
    for index, value in enumerate(HOSTILE):
        data = node(kind, **{name: value for name in FIELDS})
        data["event"] = ["signal", "message", "timer", value][index % 4]
        for action in ("apply", "refresh", "payload-add", "payload-remove-99999999999"):
            response = panel_post(designer, pid, {**data, "action": action}, csrf)
            assert response.status_code in (200, 422), (kind, value[:20], action)
            assert "panel-body" in response.get_data(as_text=True)
