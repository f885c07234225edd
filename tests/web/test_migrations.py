"""Migrations build the whole schema from empty on SQLite and PostgreSQL, and go back down."""

from flask_migrate import downgrade, upgrade
from sqlalchemy import inspect

from webapp import create_app
from webapp.extensions import db


def test_upgrade_from_empty_then_downgrade(app_config, fresh_database_url):
    fresh = create_app(dict(app_config, SQLALCHEMY_DATABASE_URI=fresh_database_url))
    with fresh.app_context():
        assert inspect(db.engine).get_table_names() == []
        upgrade()
        tables = set(inspect(db.engine).get_table_names())
        assert {
            "users",
            "roles",
            "role_permissions",
            "partitions",
            "user_roles",
            "user_partitions",
            "login_failures",
        } <= tables
        assert tables - {"alembic_version"} == set(db.metadata.tables)
        downgrade(revision="base")
        assert set(inspect(db.engine).get_table_names()) <= {"alembic_version"}
        db.engine.dispose()


def test_models_and_migrations_agree(app):
    """Autogenerate finds nothing to do: every model change has its migration."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with app.app_context(), db.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": False})
        diff = compare_metadata(context, db.metadata)
    assert diff == []
