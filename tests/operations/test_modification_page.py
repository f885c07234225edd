"""The "Move tokens" page: preview then apply, refusals naming the field with nothing changed,
and who may open it."""

from __future__ import annotations

import re

from sqlalchemy import select

from tests.helpers.app import csrf_token
from tests.helpers.documents import CLERK, document, node, wire
from tests.helpers.instances import complete, history, open_tasks, start
from tests.helpers.processes import publish_document
from webapp.models import Instance, Token


def two_tasks(partition: str | None = None):
    nodes = {
        "start": node("startEvent"),
        "a": node("userTask", "First check", assignee=CLERK),
        "b": node("userTask", "Second check", assignee=CLERK),
        "end": node("endEvent"),
    }
    return publish_document(
        document(nodes, wire("start", "a", "b", "end")), key=f"two-{partition}", partition=partition
    )


def started(engine, partition: str | None = None) -> tuple[int, int]:
    instance_id = start(engine, two_tasks(partition))
    engine.rollback()
    token = engine.scalar(select(Token.id).where(Token.instance_id == instance_id))
    return instance_id, token


def post(client, instance_id: int, **fields):
    token = csrf_token(client, f"/operations/instances/{instance_id}/modify")
    return client.post(
        f"/operations/instances/{instance_id}/modify", data={"csrf_token": token, **fields}
    )


def hidden(page: str, name: str) -> str:
    return re.search(rf'name="{name}" value="([^"]*)"', page).group(1)


def test_preview_then_apply_moves_the_token(engine, operator):
    instance_id, token = started(engine)
    page = operator.get(f"/operations/instances/{instance_id}")
    assert f"/operations/instances/{instance_id}/modify" in page.get_data(as_text=True)
    fields = {"token": str(token), f"move_{token}": "b", "reason": "skip the first check"}
    preview = post(operator, instance_id, action="preview", **fields)
    text = preview.get_data(as_text=True)
    assert preview.status_code == 200, text
    assert "Preview: what Apply will do" in text
    assert "Second check" in text
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["a"]
    extra = {"stamp": hidden(text, "stamp"), "asked": hidden(text, "asked")}
    applied = post(operator, instance_id, action="apply", **fields, **extra)
    assert applied.status_code == 303
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["b"]
    assert ("modified", None) in history(engine, instance_id)
    page = operator.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    assert "tokens moved by an operator" in page
    assert "First check → Second check" in page
    again = post(operator, instance_id, action="apply", **fields, **extra)
    assert again.status_code == 409  # the preview is stale now


def test_apply_refuses_a_stale_preview_and_a_form_changed_after_it(engine, operator):
    instance_id, token = started(engine)
    fields = {"token": str(token), f"move_{token}": "b", "reason": "why"}
    text = post(operator, instance_id, action="preview", **fields).get_data(as_text=True)
    extra = {"stamp": hidden(text, "stamp"), "asked": hidden(text, "asked")}
    changed = post(
        operator, instance_id, action="apply", **{**fields, f"move_{token}": "end"}, **extra
    )
    assert changed.status_code == 422
    assert "not the one previewed" in changed.get_data(as_text=True)
    [task] = open_tasks(engine, instance_id)
    complete(engine, task)
    stale = post(operator, instance_id, action="apply", **fields, **extra)
    assert stale.status_code == 409
    assert "moved since the preview" in stale.get_data(as_text=True)
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["b"]


def test_bad_fields_are_named_and_nothing_changes(engine, operator):
    instance_id, token = started(engine)
    answer = post(
        operator,
        instance_id,
        action="preview",
        token=str(token),
        **{f"move_{token}": "b", f"cancel_{token}": "on"},
        var_name_0="1st",
        var_value_0="1",
        var_name_1="ok",
        var_value_1="{nope",
    )
    text = answer.get_data(as_text=True)
    assert answer.status_code == 422
    assert f'id="move_{token}-msg"' in text and "not both" in text
    assert 'id="var_name_0-msg"' in text
    assert 'id="var_value_1-msg"' in text and "Variable 2 (ok)" in text
    unknown = post(operator, instance_id, action="preview", add="nowhere")
    assert unknown.status_code == 422
    assert 'id="add-msg"' in unknown.get_data(as_text=True)
    no_reason = post(operator, instance_id, action="apply", add="b", stamp="x", asked="y")
    assert no_reason.status_code == 422
    assert 'id="reason-msg"' in no_reason.get_data(as_text=True)
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["a"]
    assert engine.get(Instance, instance_id).vars == {}


def test_who_may_open_the_page(engine, user_with, login_as):
    finance_id, _ = started(engine, "finance")
    hr_id, _ = started(engine, "hr")
    reader = user_with(["instances.read", "instances.manage"], ["finance"])
    assert reader.get(f"/operations/instances/{finance_id}/modify").status_code == 403
    modifier = user_with(["instances.read", "instances.modify"], ["finance"])
    assert modifier.get(f"/operations/instances/{finance_id}/modify").status_code == 200
    assert modifier.get(f"/operations/instances/{hr_id}/modify").status_code == 404
    assert post(modifier, hr_id, action="preview", add="b").status_code == 404
