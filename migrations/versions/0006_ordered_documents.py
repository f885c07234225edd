"""process documents keep their key order: plain JSON instead of JSONB on PostgreSQL

JSONB sorts object keys, which reorders a document's nodes and flows (and flow order decides
exclusive gateways). The columns become `json`, and documents stored before are put back in the
order of their BPMN XML, which was written in document order. SQLite stores JSON text as written
and needs no change.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 08:00:00

"""

import json

import sqlalchemy as sa
from alembic import op
from lxml import etree

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

COLUMNS = [
    ("processes", "draft_document"),
    ("processes", "draft_problems"),
    ("process_versions", "document"),
]
# (table, document column, the XML column it was exported to)
DOCUMENTS = [
    ("processes", "draft_document", "draft_xml"),
    ("process_versions", "document", "bpmn_xml"),
]
PARTS = ("nodes", "flows")
PROCESS = "{http://www.omg.org/spec/BPMN/20100524/MODEL}process"
PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def upgrade():
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for table, column in COLUMNS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE json USING {column}::json")
    for table, column, xml_column in DOCUMENTS:
        rows = bind.execute(
            sa.text(f"SELECT id, {column}, {xml_column} FROM {table} WHERE {column} IS NOT NULL")
        ).all()
        for row_id, document, xml in rows:
            ordered = in_xml_order(document, xml)
            moved = any(list(ordered.get(p) or {}) != list(document.get(p) or {}) for p in PARTS)
            if moved:
                bind.execute(
                    sa.text(f"UPDATE {table} SET {column} = CAST(:doc AS json) WHERE id = :id"),
                    {"doc": json.dumps(ordered), "id": row_id},
                )


def in_xml_order(document: dict, xml: str | None) -> dict:
    """`document` with its nodes and flows in the order their elements stand in `xml`."""
    try:
        root = etree.fromstring((xml or "").encode("utf-8"), PARSER)
    except (etree.XMLSyntaxError, ValueError):
        return document
    process = root.find(PROCESS)
    if process is None:
        return document
    rank = {child.get("id"): n for n, child in enumerate(process) if isinstance(child.tag, str)}
    ordered = dict(document)
    for part in PARTS:
        items = (document.get(part) or {}).items()
        ordered[part] = dict(sorted(items, key=lambda item: rank.get(item[0], len(rank))))
    return ordered


def downgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in COLUMNS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE jsonb USING {column}::jsonb")
