"""Starting an enabled activity of a running ad-hoc sub-process (as Camunda 8's ad-hoc
activation endpoint does); needs `instances.manage`, or an open task inside it."""

from __future__ import annotations

from flask import g, jsonify

from webapp.api.blueprint import bp
from webapp.api.contract import Reply, documented
from webapp.api.schemas import ref
from webapp.api.views import json_body
from webapp.inputs import MAX_INT64
from webapp.services import adhoc, instances
from webapp.services.instances import InstanceError


@bp.post("/instances/<int:instance_id>/activities")
@documented(
    "Activate an activity of an ad-hoc sub-process",
    description="Starts `activity` (an activity without incoming flow inside a running ad-hoc "
    "sub-process) once more; `scope` names the sub-process's token when several could start "
    "it. 409 when it may not start now (one runs and it is sequential, or it is completing).",
    body=ref("ActivationRequest"),
    responses={200: Reply("The instance, with the activity started.", ref("InstanceDetail"))},
    errors=(403, 404, 409, 422),
)
def activate_activity(instance_id: int):
    body = json_body()
    fields = {name: "Unknown field." for name in sorted(set(body) - {"activity", "scope"})}
    activity, scope = body.get("activity"), body.get("scope")
    if not isinstance(activity, str) or not activity.strip() or len(activity) > 255:
        fields["activity"] = "Name the activity to start by its id."
    if scope is not None and (
        isinstance(scope, bool) or not isinstance(scope, int) or not 0 <= scope <= MAX_INT64
    ):
        fields["scope"] = "The ad-hoc sub-process's token id, a whole number."
    if fields or not isinstance(activity, str):
        raise InstanceError("invalid", "The activation is not valid.", fields=fields)
    instance = adhoc.activate(g.api_user, instance_id, activity.strip(), scope)
    return jsonify(instances.as_dict(instance, detail=True))
