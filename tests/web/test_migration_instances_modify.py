"""Upgrading gives the built-in operator role `instances.modify`; downgrading takes it away."""

from flask_migrate import downgrade, upgrade
from sqlalchemy import select

from webapp import create_app
from webapp.extensions import db
from webapp.models import Role, RolePermission

BEFORE = "0018_job_wake_at"


def _operator_permissions() -> set[str]:
    role_id = db.session.execute(select(Role.id).where(Role.name == "operator")).scalar_one()
    rows = db.session.execute(
        select(RolePermission.permission).where(RolePermission.role_id == role_id)
    )
    return set(rows.scalars())


def test_the_operator_role_may_modify_instances_after_upgrade(app_config, fresh_database_url):
    fresh = create_app(dict(app_config, SQLALCHEMY_DATABASE_URI=fresh_database_url))
    with fresh.app_context():
        upgrade(revision=BEFORE)
        assert "instances.modify" not in _operator_permissions()
        db.session.remove()
        upgrade()
        assert "instances.modify" in _operator_permissions()
        db.session.remove()
        downgrade(revision=BEFORE)
        assert "instances.modify" not in _operator_permissions()
        db.session.remove()
        downgrade(revision="base")
        db.engine.dispose()
