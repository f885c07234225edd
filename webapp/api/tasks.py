"""Task endpoints: list, read, claim, release and complete tasks as the inbox does.

Listing and the actions need `tasks.work` (403 without it), as the inbox does; a task outside
the caller's partitions or rights is 404; the actions answer 409 when the task moved on.
"""

from __future__ import annotations

from flask import g, jsonify, request

from webapp.api.blueprint import bp
from webapp.api.contract import Param, Reply, documented
from webapp.api.errors import api_error
from webapp.api.schemas import ref
from webapp.api.views import json_body, page_of, paging
from webapp.permissions import can
from webapp.services import task_api, tasks
from webapp.services.task_api import DUE, SORTS, TABS

ACTIONS = ("api.claim_task", "api.release_task", "api.complete_task")


@bp.before_request
def may_work_tasks():
    """Without tasks.work, listing and acting on tasks is 403 (reading one follows its page)."""
    acting = request.endpoint in ("api.list_tasks", *ACTIONS)
    if not acting or can(g.get("api_user"), "tasks.work", scoped=False):
        return None
    return api_error("forbidden", "You may not work tasks.", 403)


@bp.get("/tasks")
@documented(
    "List tasks",
    description="Your inbox: your tasks, those you may claim, or those you completed; needs "
    "`tasks.work`.",
    params=(
        Param("tab", {"type": "string", "enum": list(TABS)}, "Which list (mine)."),
        Param("process", {"type": "string"}, "Only tasks of this process key."),
        Param("due", {"type": "string", "enum": list(DUE)}, "Only tasks due so."),
        Param("q", {"type": "string"}, "Text in the title or business key."),
        Param("sort", {"type": "string", "enum": list(SORTS)}, "The order."),
        *paging("Tasks"),
    ),
    responses={200: Reply("A page of tasks.", ref("TaskPage"))},
    errors=(422,),
    tag="tasks",
)
def list_tasks():
    return page_of(task_api.list_query(g.api_user, request.args), task_api.as_dict)


@bp.get("/tasks/<int:task_id>")
@documented(
    "Read a task",
    description="With its form, the values it starts from, the instance's data and what you "
    "may do.",
    responses={200: Reply("The task.", ref("TaskDetail"))},
    tag="tasks",
)
def get_task(task_id: int):
    task = tasks.get_task(g.api_user, task_id)
    return jsonify(task_api.detail_dict(g.api_user, task))


@bp.post("/tasks/<int:task_id>/claim")
@documented(
    "Claim a task",
    body=ref("EmptyRequest"),
    body_required=False,
    responses={200: Reply("The task.", ref("TaskDetail"))},
    errors=(409, 422),
    tag="tasks",
)
def claim_task(task_id: int):
    _no_fields(json_body(required=False))
    task = tasks.claim(g.api_user, task_id)
    return jsonify(task_api.detail_dict(g.api_user, task))


@bp.post("/tasks/<int:task_id>/release")
@documented(
    "Release a claimed task",
    body=ref("EmptyRequest"),
    body_required=False,
    responses={200: Reply("The task.", ref("TaskDetail"))},
    errors=(409, 422),
    tag="tasks",
)
def release_task(task_id: int):
    _no_fields(json_body(required=False))
    task = tasks.release(g.api_user, task_id)
    return jsonify(task_api.detail_dict(g.api_user, task))


@bp.post("/tasks/<int:task_id>/complete")
@documented(
    "Complete a task",
    description="With the form's values; the answer says where the instance went on (`moved_on`).",
    body=ref("TaskValues"),
    body_required=False,
    responses={200: Reply("The completed task.", ref("TaskDetail"))},
    errors=(409, 422),
    tag="tasks",
)
def complete_task(task_id: int):
    """Body: the form's values by field key (`{}` for a task without a form)."""
    done = task_api.complete(g.api_user, task_id, json_body(required=False))
    data = task_api.detail_dict(g.api_user, done.task)
    data["moved_on"] = {"message": done.where, "next_task": done.next_task_id}
    return jsonify(data)


def _no_fields(body: dict) -> None:
    if body:
        raise tasks.TaskError(
            "invalid",
            "This action takes no fields.",
            status=422,
            fields={name: "Unknown field." for name in body},
        )
