"""The `flask --app webapp` commands: create-user, seed-demo, dev, scenarios run."""

from __future__ import annotations

from pathlib import Path

import click
from flask import Flask, current_app
from flask.cli import with_appcontext
from sqlalchemy import select

from webapp.cli import demo
from webapp.cli.demo_processes import seed_demo_processes
from webapp.cli.devserver import run_all
from webapp.engine.scenario_runner import RunResult
from webapp.extensions import db
from webapp.models import Partition, Process, Role
from webapp.services import accounts
from webapp.services import scenarios as test_scenarios


def register(app: Flask) -> None:
    app.cli.add_command(create_user)
    app.cli.add_command(seed_demo)
    app.cli.add_command(dev)
    app.cli.add_command(scenarios_group)


@click.command("create-user")
@click.argument("username")
@click.option("--password", prompt=True, hide_input=True, confirmation_prompt=True)
@click.option("--display-name", default="")
@click.option("--email", default="")
@click.option("--role", "roles", multiple=True, help="Role name; repeat for several.")
@click.option("--partition", "partitions", multiple=True, help="Partition key; repeat.")
def create_user(username, password, display_name, email, roles, partitions) -> None:
    """Create a user with roles and partitions."""
    found_roles = list(db.session.scalars(select(Role).where(Role.name.in_(roles))))
    missing = set(roles) - {r.name for r in found_roles}
    found_parts = list(db.session.scalars(select(Partition).where(Partition.key.in_(partitions))))
    missing_parts = set(partitions) - {p.key for p in found_parts}
    if missing or missing_parts:
        raise click.ClickException(
            "unknown "
            + ", ".join(
                [f"role {n!r}" for n in sorted(missing)]
                + [f"partition {k!r}" for k in sorted(missing_parts)]
            )
        )
    try:
        accounts.create_user(
            username,
            password,
            display_name=display_name,
            email=email,
            roles=found_roles,
            partitions=found_parts,
        )
    except accounts.AccountError as error:
        raise click.ClickException(f"{error.field}: {error.message}") from error
    click.echo(f"created user {username.strip().lower()}")


@click.command("seed-demo")
@click.option("--no-processes", is_flag=True, help="Only users, roles and partitions.")
@click.option("--force", is_flag=True, help="Seed even in production (public password).")
@with_appcontext
def seed_demo(no_processes: bool, force: bool) -> None:
    """Create (or reset) the demo users, roles and partitions; publish the demo processes."""
    if current_app.config["FLOWDESK_ENV"] == "production" and not force:
        raise click.ClickException(
            "refusing to seed demo data in production: it creates five users whose password "
            f"is the public {demo.DEMO_PASSWORD!r}. Add --force if you really mean it."
        )
    counts = demo.seed_demo()
    created = 0 if no_processes else seed_demo_processes()
    click.echo(
        f"demo data ready: {counts['users']} users, {counts['roles']} roles, "
        f"{counts['partitions']} partitions, {created} new demo processes; "
        f"every demo password is {demo.DEMO_PASSWORD!r}"
    )


@click.command("dev")
@click.option("--host", default="127.0.0.1")
@click.option("--port", default=5000, type=int)
@click.option("--workers", default=1, type=int, help="How many worker processes to start.")
def dev(host: str, port: int, workers: int) -> None:
    """Run Redis (embedded unless REDIS_URL), workers and the web server; Ctrl-C stops all."""
    run_all(host, port, workers)


@click.group("scenarios")
def scenarios_group() -> None:
    """Test scenarios: play them on process drafts."""


def _echo_result(label: str, result: RunResult) -> None:
    if result.passed:
        click.echo(f"PASS {label}")
    else:
        failure = result.failure
        where = f"{failure.step}: {failure.reason}" if failure else "failed"
        click.echo(f"FAIL {label}: {where}")


@scenarios_group.command("run")
@click.option("--process", "key", default=None, help="Only the process with this key.")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@with_appcontext
def run_scenarios(key: str | None, files: tuple[str, ...]) -> None:
    """Run the scenarios of every process (or --process KEY) on its draft, or those of exported
    JSON or BPMN files; exits 1 when one fails."""
    runs: list[tuple[str, RunResult]] = []
    if files:
        for path in files:
            try:
                document, bodies = test_scenarios.read_export(Path(path).read_bytes())
            except test_scenarios.ScenarioRefused as refused:
                raise click.ClickException(f"{path}: {refused}") from None
            for body in bodies:
                result = test_scenarios.run_body(document, body)
                runs.append((f"{path}: {result.name}", result))
    else:
        query = select(Process).order_by(Process.key)
        if key:
            query = query.where(Process.key == key)
        found = list(db.session.scalars(query))
        if key and not found:
            raise click.ClickException(f"no process with the key {key!r}")
        for process in found:
            for row, result in test_scenarios.run_all(process):
                runs.append((f"{process.key}: {row.name}", result))
    for label, result in runs:
        _echo_result(label, result)
    failed = sum(1 for _, result in runs if not result.passed)
    click.echo(f"{len(runs) - failed} passed, {failed} failed")
    if failed:
        raise SystemExit(1)
