"""The application factory: settings, extensions, blueprints, error pages, CLI.

The composition root: the one module that wires every layer together.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from webapp.admin import bp as admin_bp
from webapp.api import bp as api_bp
from webapp.auth import bp as auth_bp
from webapp.cli import commands
from webapp.config import (
    ROOT,
    ConfigError,
    development_fallback,
    load_config,
    settings_file,
)
from webapp.designer import bp as designer_bp
from webapp.engine import history, limits
from webapp.extensions import csrf, db, htmx, login_manager, migrate
from webapp.home import bp as home_bp
from webapp.inbox import bp as inbox_bp
from webapp.infra import database, logs
from webapp.models.inbox import compared_with_models
from webapp.operations import bp as operations_bp
from webapp.plugins import load_tools
from webapp.services import notifications, webhooks
from webapp.services.accounts import session_user
from webapp.web import assets, error_pages, guard, headers, templating, transport


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the Flask app: defaults, then environment variables, then `config`.

    A setting that is wrong (PostgreSQL refusing DATABASE_URL included) raises ConfigError; under
    the `flask` command it ends the command with that one line instead of a traceback."""
    command_line = click.get_current_context(silent=True) is not None
    try:
        if command_line:
            _check_settings_loaded(config)
        return _build(config)
    except ConfigError as error:
        if not command_line:
            raise
        raise click.ClickException(str(error)) from None


def _check_settings_loaded(config: Mapping[str, Any] | None) -> None:
    """A `flask` command run from a shell that did not load the settings would quietly work on
    the development SQLite file: refuse where production settings exist, warn elsewhere."""
    if not development_fallback(config):
        return
    production = settings_file()
    if production.exists():
        raise ConfigError(
            f"no settings loaded, but this machine has {production}: load them first "
            f"(as the service user: set -a; . {production}; set +a), or set "
            "FLOWDESK_ENV=development to work on the development database on purpose"
        )
    click.secho(
        "WARNING: no settings loaded (FLOWDESK_ENV and DATABASE_URL are unset): using the "
        "development database under instance/. Set FLOWDESK_ENV=development to silence this.",
        err=True,
        fg="yellow",
    )


def _build(config: Mapping[str, Any] | None) -> Flask:
    if not (ROOT / "templates").is_dir() or not (ROOT / "migrations").is_dir():
        raise ConfigError(
            f"Flowdesk runs from its checkout, but {ROOT} has no templates/ or migrations/: it "
            "was installed with a plain `pip install .`. Install it in the checkout with "
            "`make setup` (or `pip install -e .`); see docs/deploy.md."
        )
    app = Flask(
        __name__,
        instance_path=str((config or {}).get("INSTANCE_PATH") or ROOT / "instance"),
        template_folder=str(ROOT / "templates"),
        static_folder=str(ROOT / "static"),
    )
    app.config.update(load_config(Path(app.instance_path), config))
    limits.configure(app.config)
    webhooks.configure(app.config)
    history.observe(webhooks.record_events)
    logs.configure(app)
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite:"):
        Path(app.instance_path).mkdir(parents=True, exist_ok=True)

    if app.config["TRUSTED_PROXIES"]:
        # Client address and scheme from the X-Forwarded-* headers the trusted proxies add.
        hops = app.config["TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops)  # type: ignore[method-assign]

    _init_extensions(app)
    if not app.config.get("TESTING"):
        database.check_settings(app)
    guard.register(app)  # before the blueprints: it replaces the `int` URL converter
    _register_blueprints(app)

    assets.register(app)
    error_pages.register(app)
    templating.register(app)
    transport.register(app)
    commands.register(app)
    headers.register(app)
    load_tools()
    history.observe(notifications.observe_history)
    return app


def _init_extensions(app: Flask) -> None:
    db.init_app(app)
    database.configure(app)
    migrate.init_app(app, db, directory=str(ROOT / "migrations"), include_name=compared_with_models)
    csrf.init_app(app)
    htmx.init_app(app)
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.login_message = "Please sign in to see that page."
    login_manager.login_message_category = "info"
    login_manager.session_protection = "strong"

    login_manager.user_loader(session_user)


def _register_blueprints(app: Flask) -> None:
    app.register_blueprint(auth_bp)
    app.register_blueprint(admin_bp, url_prefix="/admin")
    app.register_blueprint(api_bp, url_prefix="/api")
    app.register_blueprint(home_bp)
    app.register_blueprint(inbox_bp, url_prefix="/inbox")
    app.register_blueprint(designer_bp, url_prefix="/designer")
    app.register_blueprint(operations_bp, url_prefix="/operations")
