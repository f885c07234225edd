"""Migration 0016 adds the partial indexes of unclaimed open tasks and takes them away again."""

from flask_migrate import downgrade, upgrade
from sqlalchemy import inspect

from webapp import create_app
from webapp.extensions import db

NEW = {"ix_tasks_unclaimed", "ix_tasks_unclaimed_created_at"}


def _indexes() -> set[str]:
    return {index["name"] for index in inspect(db.engine).get_indexes("tasks")}


def test_the_unclaimed_tasks_index_comes_and_goes(app_config, fresh_database_url):
    fresh = create_app(dict(app_config, SQLALCHEMY_DATABASE_URI=fresh_database_url))
    with fresh.app_context():
        upgrade(revision="0015_idempotency_scopes")
        assert not NEW & _indexes()
        upgrade()
        assert _indexes() >= NEW
        downgrade(revision="0015_idempotency_scopes")
        assert not NEW & _indexes()
        assert "ix_tasks_open_to_partition_status" in _indexes()
        db.engine.dispose()
