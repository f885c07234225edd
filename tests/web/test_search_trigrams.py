"""Migration 0017: on PostgreSQL, trigram indexes for inbox search when pg_trgm can be had, and
a successful upgrade without them when it cannot; SQLite is left as it was."""

from __future__ import annotations

import uuid

import pytest
from alembic.script import ScriptDirectory
from flask import current_app
from flask_migrate import downgrade, upgrade
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from webapp import create_app
from webapp.extensions import db
from webapp.models.inbox import SEARCH_INDEXES

BEFORE = "0016_unclaimed_tasks_index"
SUPERUSER = text("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
TRIGRAMS = text("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")


def _indexes() -> set[str]:
    found = set()
    for table in ("tasks", "instances"):
        found |= {index["name"] for index in inspect(db.engine).get_indexes(table)}
    return found & SEARCH_INDEXES


def test_the_search_indexes_come_and_go_on_postgresql(app_config, fresh_database_url):
    fresh = create_app(dict(app_config, SQLALCHEMY_DATABASE_URI=fresh_database_url))
    with fresh.app_context():
        upgrade(revision=BEFORE)
        upgrade()
        postgres = db.engine.dialect.name == "postgresql"
        assert _indexes() == (SEARCH_INDEXES if postgres else set())
        downgrade(revision=BEFORE)
        assert _indexes() == set()
        upgrade()
        db.engine.dispose()


def test_without_the_right_to_create_pg_trgm_the_upgrade_still_succeeds(
    app_config, fresh_database_url
):
    """A database user who may create tables but not extensions (no CREATE on the database)."""
    if not fresh_database_url.startswith("postgresql"):
        pytest.skip("SQLite has no extensions: its search keeps LIKE")
    owner = create_engine(fresh_database_url, isolation_level="AUTOCOMMIT")
    with owner.connect() as conn:
        if not conn.execute(SUPERUSER).scalar():
            pytest.skip("creating a database user for this test needs a superuser")
        if conn.execute(TRIGRAMS).scalar():
            pytest.skip("pg_trgm comes with every new database on this server (template1)")
        name = f"flowdesk_plain_{uuid.uuid4().hex[:8]}"
        conn.execute(text(f"CREATE ROLE {name} LOGIN PASSWORD 'plain-password'"))
        conn.execute(text(f"GRANT CREATE, USAGE ON SCHEMA public TO {name}"))
    plain = make_url(fresh_database_url).set(username=name, password="plain-password")
    url = plain.render_as_string(hide_password=False)
    try:
        fresh = create_app(dict(app_config, SQLALCHEMY_DATABASE_URI=url))
        with fresh.app_context():
            upgrade()
            assert _indexes() == set()
            version = db.session.execute(text("SELECT version_num FROM alembic_version")).scalar()
            config = current_app.extensions["migrate"].migrate.get_config()
            assert version == ScriptDirectory.from_config(config).get_current_head()
            db.session.remove()
            db.engine.dispose()
    finally:
        with owner.connect() as conn:
            conn.execute(text(f"DROP OWNED BY {name}"))
            conn.execute(text(f"DROP ROLE {name}"))
        owner.dispose()
    with owner.connect() as conn:
        assert not conn.execute(TRIGRAMS).scalar(), "the migration created nothing"
    owner.dispose()
