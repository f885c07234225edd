"""API endpoints: thin wrappers over the instances service; every answer is JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Response, g, jsonify, request, url_for

from webapp import inputs
from webapp.api.blueprint import bp
from webapp.api.contract import Param, Reply, documented
from webapp.api.errors import BadRequest
from webapp.api.schemas import ref
from webapp.engine import history
from webapp.extensions import db
from webapp.models.session import db_session
from webapp.services import conditional_starts, instances, messages, signals
from webapp.services.instances import InstanceError
from webapp.services.operations import bulk, migration, modification, suspension

MAX_PER_PAGE = 100
MAX_HISTORY = 1000

RETRY_KEY = Param(
    instances.IDEMPOTENCY_HEADER,
    {"type": "string", "pattern": "^[!-~]{1,255}$"},
    "Repeat the request with the same key to get the first answer instead of a second effect.",
    where="header",
)
REPLAYED = {"Idempotent-Replayed": "`true`: the answer of the first request with this key."}
INSTANCE_URL = {"Location": "The instance's URL."}


@bp.before_request
def change_bodies_are_json():
    """Every change request's body is checked alike (media type, depth, NUL, ...), also where
    the endpoint reads none, so a bad body is never accepted silently; runs after `authenticate`."""
    if request.method in ("POST", "PATCH", "PUT") and request.get_data(cache=True).strip():
        json_body(required=False)


def json_body(required: bool = True) -> dict[str, Any]:
    """The request's JSON object; 415 for a body of another media type (a form, say), 400 for
    malformed JSON or another type of value, 400/422 naming the field for what cannot be stored
    (too deep, NUL, NaN, numbers out of range)."""
    if request.mimetype and not request.is_json and request.content_length != 0:
        raise BadRequest(
            "unsupported_media_type",
            f"The body is {request.mimetype}; send JSON with Content-Type: application/json.",
            415,
        )
    raw = request.get_data(cache=True)
    if not raw.strip():
        if required:
            raise BadRequest("malformed_json", "Send a JSON object as the request body.")
        return {}
    try:
        data = inputs.parse_json(raw)
    except inputs.InputError as error:
        if error.field == "body" and error.status == 400:
            raise BadRequest("malformed_json", f"body: {error.message}") from None
        raise
    if not isinstance(data, dict):
        raise BadRequest("malformed_json", "The body must be a JSON object.")
    return data


def whole_number(name: str, default: int, low: int, high: int) -> int:
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    value = inputs.whole_number(raw, low, high)
    if value is None:
        raise InstanceError(
            "invalid",
            f"Some values need fixing: {name}.",
            fields={name: f"Use a whole number from {low} to {high}."},
        )
    return value


def paging(noun: str) -> tuple[Param, Param]:
    """The `page` and `per_page` parameters every list operation declares (see `page_of`)."""
    return (
        Param("page", {"type": "integer", "minimum": 1, "maximum": 1_000_000}, "From 1."),
        Param(
            "per_page",
            {"type": "integer", "minimum": 1, "maximum": MAX_PER_PAGE},
            f"{noun} a page (25).",
        ),
    )


def page_of(query: Any, as_dict: Callable[[Any], dict[str, Any]]) -> Response:
    """One page of `query` (the URL's `page` and `per_page`) with the total: how every list
    endpoint answers."""
    page = whole_number("page", 1, 1, 1_000_000)
    per_page = whole_number("per_page", 25, 1, MAX_PER_PAGE)
    total = db.session.scalar(
        db.select(db.func.count()).select_from(query.order_by(None).subquery())
    )
    items = db.session.scalars(query.limit(per_page).offset((page - 1) * per_page))
    return jsonify(
        items=[as_dict(item) for item in items], page=page, per_page=per_page, total=total
    )


@bp.post("/instances")
@documented(
    "Start an instance",
    description="Starts the newest (or the given) published version; needs `instances.start`.",
    body=ref("StartRequest"),
    params=(RETRY_KEY,),
    responses={
        201: Reply("Started.", ref("InstanceDetail"), INSTANCE_URL),
        200: Reply(
            "Started before with this Idempotency-Key.",
            ref("InstanceDetail"),
            {**INSTANCE_URL, **REPLAYED},
        ),
    },
    errors=(403, 404, 409, 422),
)
def start_instance():
    retry_key = request.headers.get(instances.IDEMPOTENCY_HEADER)
    instance, created = instances.start_from_request(
        g.api_user, json_body(), via="api", idempotency_key=retry_key
    )
    response = jsonify(instances.as_dict(instance, detail=True))
    response.status_code = 201 if created else 200
    response.headers["Location"] = url_for("api.get_instance", instance_id=instance.id)
    if not created:
        response.headers["Idempotent-Replayed"] = "true"
    return response


@bp.get("/instances")
@documented(
    "List instances",
    description="Newest first; with `instances.read`, else only the instances you started.",
    params=(
        Param("process", {"type": "string"}, "A process key."),
        Param(
            "status",
            {"type": "string", "enum": list(instances.INSTANCE_STATUSES)},
            "Only instances in this status.",
        ),
        Param("business_key", {"type": "string"}, "Only instances with this business key."),
        Param("partition", {"type": "string"}, "Only instances in this partition (a key)."),
        *paging("Instances"),
    ),
    responses={200: Reply("A page of instances.", ref("InstancePage"))},
    errors=(422,),
)
def list_instances():
    return page_of(instances.list_query(g.api_user, request.args), instances.as_dict)


@bp.get("/instances/<int:instance_id>")
@documented(
    "Read an instance",
    description="With its input, variables, node outputs, current tokens and open tasks.",
    responses={200: Reply("The instance.", ref("InstanceDetail"))},
)
def get_instance(instance_id: int):
    instance = instances.get_instance(g.api_user, instance_id)
    return jsonify(instances.as_dict(instance, detail=True))


@bp.get("/instances/<int:instance_id>/history")
@documented(
    "Read an instance's history",
    description="Entries in order; `next_after` pages on (null on the last page).",
    params=(
        Param(
            "after",
            {"type": "integer", "minimum": 0, "maximum": 2**62},
            "Only entries after this entry id.",
        ),
        Param(
            "limit",
            {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY},
            "Entries a page (200).",
        ),
    ),
    responses={200: Reply("A page of history entries.", ref("HistoryPage"))},
    errors=(422,),
)
def instance_history(instance_id: int):
    instances.get_instance(g.api_user, instance_id)
    after = whole_number("after", 0, 0, 2**62)
    limit = whole_number("limit", 200, 1, MAX_HISTORY)
    entries = history.entries(db_session(), instance_id, after=after, limit=limit)
    return jsonify(
        items=[history.as_dict(entry) for entry in entries],
        next_after=entries[-1].id if len(entries) == limit else None,
    )


@bp.post("/instances/<int:instance_id>/cancel")
@documented(
    "Cancel an instance",
    description="Closes its tokens, jobs, subscriptions and open tasks; needs `instances.manage`.",
    body=ref("ReasonRequest"),
    body_required=False,
    responses={200: Reply("The cancelled instance.", ref("InstanceDetail"))},
    errors=(403, 409, 422),
)
def cancel_instance(instance_id: int):
    body = json_body(required=False)
    unknown = sorted(set(body) - {"reason"})
    if unknown:
        raise InstanceError(
            "invalid", "Unknown fields.", fields={name: "Unknown field." for name in unknown}
        )
    instance = instances.cancel(g.api_user, instance_id, body.get("reason", ""))
    return jsonify(instances.as_dict(instance, detail=True))


@bp.post("/instances/<int:instance_id>/retry")
@documented(
    "Retry a failed instance",
    description="Every failed token enters its node again; needs `instances.manage`.",
    body={"type": "object", "maxProperties": 0},
    body_required=False,
    responses={200: Reply("The instance, running again.", ref("InstanceDetail"))},
    errors=(403, 409, 422),
)
def retry_instance(instance_id: int):
    body = json_body(required=False)
    if body:
        raise InstanceError(
            "invalid", "Retry takes no fields.", fields={name: "Unknown field." for name in body}
        )
    instance = instances.retry(g.api_user, instance_id)
    return jsonify(instances.as_dict(instance, detail=True))


# --- moving tokens (instance modification) ----------------------------------------------------


@bp.post("/instances/<int:instance_id>/modifications")
@documented(
    "Move tokens of an instance",
    description="Preview (`dry_run`) or apply moves, cancels and additions of tokens and "
    "variable edits; needs `instances.modify`.",
    body=ref("ModificationRequest"),
    responses={200: Reply("What the change does (or did).", ref("ModificationPreview"))},
    errors=(403, 409, 422),
)
def modify_instance(instance_id: int):
    """Preview (`dry_run`) or apply moves, cancels and additions of tokens and variable edits."""
    return jsonify(modification.from_body(g.api_user, instance_id, json_body()))


@bp.post("/messages")
@documented(
    "Send a message",
    description="Wakes every matching waiting instance you may see; when none waits, starts "
    "the process whose message start listens for the name.",
    body=ref("MessageRequest"),
    params=(RETRY_KEY,),
    responses={
        200: Reply(
            "Delivered (or delivered before, with `duplicate`).",
            ref("MessageDelivery"),
            {**INSTANCE_URL, **REPLAYED},
        ),
        201: Reply("Started an instance.", ref("MessageDelivery"), INSTANCE_URL),
    },
    errors=(403, 404, 409, 422),
    tag="events",
)
def send_message():
    retry_key = request.headers.get(instances.IDEMPOTENCY_HEADER)
    delivery = messages.deliver_message(g.api_user, json_body(), idempotency_key=retry_key)
    response = jsonify(delivery.as_dict())
    if delivery.started is not None:
        response.headers["Location"] = url_for("api.get_instance", instance_id=delivery.started)
        if not delivery.duplicate:
            response.status_code = 201
    if delivery.duplicate:
        response.headers["Idempotent-Replayed"] = "true"
    return response


@bp.post("/signals")
@documented(
    "Broadcast a signal",
    description="To the waiting instances and signal starts of one partition (none: those in "
    "no partition); workers deliver it.",
    body=ref("SignalRequest"),
    params=(RETRY_KEY,),
    responses={
        202: Reply("Accepted.", ref("Broadcast"), {"Location": "The broadcast's URL."}),
        200: Reply(
            "Broadcast before with this Idempotency-Key.",
            ref("Broadcast"),
            {"Location": "The broadcast's URL.", **REPLAYED},
        ),
    },
    errors=(403, 409, 422),
    tag="events",
)
def broadcast_signal():
    retry_key = request.headers.get(instances.IDEMPOTENCY_HEADER)
    broadcast, created = signals.broadcast_once(g.api_user, json_body(), retry_key)
    response = jsonify(signals.as_dict(broadcast))
    response.status_code = 202 if created else 200
    if not created:
        response.headers["Idempotent-Replayed"] = "true"
    response.headers["Location"] = url_for("api.get_signal", broadcast_id=broadcast.id)
    return response


@bp.post("/conditions")
@documented(
    "Evaluate conditional starts",
    description="Hands variables to the conditional start events of the published, not "
    "suspended processes you may start (one process or partition when named); each start whose "
    "condition holds starts one instance with the variables as its input.",
    body=ref("ConditionsRequest"),
    responses={
        200: Reply("What was evaluated, and the instances started.", ref("ConditionsResult"))
    },
    errors=(403, 422),
    tag="events",
)
def evaluate_conditions():
    evaluated = conditional_starts.evaluate_starts(g.api_user, json_body())
    started = [item.instance for item in evaluated if item.instance is not None]
    return jsonify(evaluated=[item.as_dict() for item in evaluated], started=started)


@bp.get("/signals/<int:broadcast_id>")
@documented(
    "Read a broadcast",
    description="Its status and progress.",
    responses={200: Reply("The broadcast.", ref("Broadcast"))},
    tag="events",
)
def get_signal(broadcast_id: int):
    return jsonify(signals.as_dict(signals.get_broadcast(g.api_user, broadcast_id)))


# --- migrating instances to another version ---------------------------------------------------

MIGRATION_FIELDS = {"from", "to", "mapping", "instances", "dry_run", "reason"}


@bp.post("/processes/<key>/migrations")
@documented(
    "Migrate instances to another version",
    description="Dry run (a verdict per instance) or start migrating; needs `instances.modify`.",
    body=ref("MigrationRequest"),
    responses={
        200: Reply("The dry run.", ref("MigrationDryRun")),
        202: Reply("Started.", ref("MigrationStarted"), {"Location": "Its progress."}),
    },
    errors=(403, 409, 422),
    tag="processes",
)
def migrate_instances(key: str):
    """Dry run (verdict per instance) or start migrating instances of one version to another."""
    body = json_body()
    unknown = sorted(set(body) - MIGRATION_FIELDS)
    if unknown:
        raise InstanceError(
            "invalid", "Unknown fields.", fields={name: "Unknown field." for name in unknown}
        )
    dry = body.get("dry_run", False)
    reason = body.get("reason", "")
    if not isinstance(dry, bool) or not isinstance(reason, str):
        wrong = {"dry_run": "Use true or false."} if not isinstance(dry, bool) else {}
        wrong.update({} if isinstance(reason, str) else {"reason": "Use text."})
        raise InstanceError("invalid", "Some values need fixing.", fields=wrong)
    setup = migration.setup(g.api_user, key, body.get("from"), body.get("to"), body.get("mapping"))
    ids = migration.selection(g.api_user, setup, body.get("instances"))
    if dry:
        report = migration.dry_run(setup, ids)
        return jsonify(
            process=setup.process.key,
            to=setup.target.number,
            mapping=setup.mapping,
            counts=report.counts(),
            verdicts=[report.as_dict(instance_id) for instance_id in report.ids],
            **{"from": setup.source.number},
        )
    operation = migration.start(g.api_user, setup, ids, reason)
    response = jsonify(
        operation=operation.id,
        total=operation.total,
        progress=url_for("api.migration_progress", operation_id=operation.id),
        page=url_for("operations.bulk_progress", operation_id=operation.id),
    )
    response.status_code = 202
    response.headers["Location"] = url_for("api.migration_progress", operation_id=operation.id)
    return response


@bp.get("/migrations/<int:operation_id>")
@documented(
    "Read a migration's progress",
    description="Its status, counts and each instance's outcome so far.",
    responses={200: Reply("The migration.", ref("MigrationProgress"))},
    errors=(403,),
    tag="processes",
)
def migration_progress(operation_id: int):
    """A migration's progress: its status, counts and each instance's outcome so far."""
    operation = bulk.get_operation(g.api_user, operation_id)
    if operation.action != migration.ACTION:
        raise InstanceError("not_found", f"There is no migration {operation_id}.", status=404)
    return jsonify(
        operation=operation.id,
        status=operation.status,
        params=operation.params,
        counts=bulk.counts(operation),
        items=[
            {"instance": item.instance_id, "status": item.status, "message": item.message}
            for item in bulk.items(operation, size=1000)
        ],
    )


# --- suspend and resume -----------------------------------------------------------------------


def _reason_only(body: dict[str, Any]) -> Any:
    unknown = sorted(set(body) - {"reason"})
    if unknown:
        raise InstanceError(
            "invalid", "Unknown fields.", fields={name: "Unknown field." for name in unknown}
        )
    return body.get("reason", "")


@bp.post("/instances/<int:instance_id>/suspend")
@documented(
    "Suspend an instance",
    description="Holds what reaches it until it is resumed; needs `instances.modify`.",
    body=ref("RequiredReasonRequest"),
    responses={200: Reply("The suspended instance.", ref("InstanceDetail"))},
    errors=(403, 409, 422),
)
def suspend_instance(instance_id: int):
    reason = _reason_only(json_body())
    instance = suspension.suspend(g.api_user, instance_id, reason)
    return jsonify(instances.as_dict(instance, detail=True))


@bp.post("/instances/<int:instance_id>/resume")
@documented(
    "Resume an instance",
    description="Applies what waited in arrival order; needs `instances.modify`.",
    body=ref("ReasonRequest"),
    body_required=False,
    responses={200: Reply("The resumed instance.", ref("InstanceDetail"))},
    errors=(403, 409, 422),
)
def resume_instance(instance_id: int):
    reason = _reason_only(json_body(required=False))
    instance = suspension.resume(g.api_user, instance_id, reason)
    return jsonify(instances.as_dict(instance, detail=True))


def _version_change(body: dict[str, Any]) -> tuple[Any, bool]:
    unknown = sorted(set(body) - {"reason", "instances"})
    fields = {name: "Unknown field." for name in unknown}
    also = body.get("instances", False)
    if not isinstance(also, bool):
        fields["instances"] = "Use true to change the version's instances too, or false."
    if fields:
        raise InstanceError("invalid", "Some values need fixing.", fields=fields)
    return body.get("reason", ""), also


def _version_answer(version: Any, operation_id: int | None):
    data = suspension.version_dict(version)
    data["bulk_operation"] = operation_id
    response = jsonify(data)
    if operation_id is not None:
        response.status_code = 202
        response.headers["Location"] = url_for(
            "operations.bulk_progress", operation_id=operation_id
        )
    return response


@bp.post("/processes/<key>/versions/<int:number>/suspend")
@documented(
    "Suspend a process version",
    description="Starting it is then refused; with `instances`, its instances are suspended too.",
    body=ref("VersionChangeRequest"),
    responses={
        200: Reply("The version.", ref("VersionSuspension")),
        202: Reply(
            "The version; its instances follow in a bulk operation.",
            ref("VersionSuspension"),
            {"Location": "The bulk operation's page."},
        ),
    },
    errors=(403, 409, 422),
    tag="processes",
)
def suspend_version(key: str, number: int):
    reason, also = _version_change(json_body())
    version, operation_id = suspension.suspend_version(
        g.api_user, key, number, reason, instances=also
    )
    return _version_answer(version, operation_id)


@bp.post("/processes/<key>/versions/<int:number>/resume")
@documented(
    "Resume a process version",
    description="With `instances`, its suspended instances are resumed too.",
    body=ref("VersionChangeRequest"),
    body_required=False,
    responses={
        200: Reply("The version.", ref("VersionSuspension")),
        202: Reply(
            "The version; its instances follow in a bulk operation.",
            ref("VersionSuspension"),
            {"Location": "The bulk operation's page."},
        ),
    },
    errors=(403, 409, 422),
    tag="processes",
)
def resume_version(key: str, number: int):
    reason, also = _version_change(json_body(required=False))
    version, operation_id = suspension.resume_version(
        g.api_user, key, number, reason, instances=also
    )
    return _version_answer(version, operation_id)
