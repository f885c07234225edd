"""Migrations build the whole schema from empty on SQLite and PostgreSQL, and go back down."""

import json

import pytest
from flask_migrate import downgrade, upgrade
from sqlalchemy import inspect, text

from webapp import create_app
from webapp.extensions import db
from webapp.models.inbox import compared_with_models
from webapp.process.bpmn import export_bpmn
from webapp.process.document import content_hash, normalize


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
        opts = {"compare_type": False, "include_name": compared_with_models}
        context = MigrationContext.configure(conn, opts=opts)
        diff = compare_metadata(context, db.metadata)
    assert diff == []


def test_documents_stored_as_jsonb_get_their_order_back(app_config, fresh_database_url):
    """Before 0006, PostgreSQL's JSONB sorted a document's nodes and flows; 0006 restores the
    order of the document's BPMN XML, so a gateway tries its flows as the modeller drew them."""
    if not fresh_database_url.startswith("postgresql"):
        pytest.skip("SQLite stores JSON text as written: there is nothing to repair")
    nodes = {
        "start": {"kind": "startEvent", "title": "", "config": {}},
        "gw": {"kind": "exclusiveGateway", "title": "", "config": {}},
        "z_end": {"kind": "endEvent", "title": "", "config": {}},
        "a_end": {"kind": "endEvent", "title": "", "config": {}},
    }
    flows = {
        "f": {"source": "start", "target": "gw"},
        "zz_first": {"source": "gw", "target": "z_end", "condition": "true"},
        "a_second": {"source": "gw", "target": "a_end", "default": True},
    }
    doc = normalize({"format_version": 1, "key": "order", "nodes": nodes, "flows": flows})
    fresh = create_app(dict(app_config, SQLALCHEMY_DATABASE_URI=fresh_database_url))
    with fresh.app_context():
        upgrade(revision="0005")
        with db.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO processes (id, key, name, description, draft_xml, draft_document,"
                    " draft_revision, draft_problems, created_at, updated_at) VALUES (1, 'order',"
                    " 'Order', '', :xml, CAST(:doc AS jsonb), 1, '[]', now(), now())"
                ),
                {"xml": export_bpmn(doc), "doc": json.dumps(doc)},
            )
            conn.execute(
                text(
                    "INSERT INTO process_versions (process_id, number, document, bpmn_xml,"
                    " content_hash, change_note, published_at) VALUES (1, 1, CAST(:doc AS jsonb),"
                    " :xml, :hash, '', now())"
                ),
                {"xml": export_bpmn(doc), "doc": json.dumps(doc), "hash": content_hash(doc)},
            )
            stored = conn.execute(text("SELECT document FROM process_versions")).scalar_one()
        assert list(stored["flows"]) != list(doc["flows"]), "JSONB sorted the keys"
        upgrade()
        with db.engine.connect() as conn:
            version = conn.execute(text("SELECT document FROM process_versions")).scalar_one()
            draft = conn.execute(text("SELECT draft_document FROM processes")).scalar_one()
        for repaired in (version, draft):
            assert list(repaired["flows"]) == ["f", "zz_first", "a_second"]
            assert list(repaired["nodes"]) == ["start", "gw", "z_end", "a_end"]
        assert content_hash(version) == content_hash(doc)
        downgrade(revision="base")
        db.engine.dispose()
