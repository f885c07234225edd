"""Published DMN decisions for the business rule task tests: small DMN tables, and DMN files
imported and published through the decisions service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select

FILES = Path(__file__).resolve().parent.parent / "differential" / "files"

DMN = "https://www.omg.org/spec/DMN/20191111/MODEL/"


def table_dmn(
    decision_id: str,
    rules: list[tuple[str, str]],
    *,
    input_text: str = "amount",
    input_type: str = "number",
    hit_policy: str = "UNIQUE",
    output: str = "discount",
    output_type: str = "number",
    name: str | None = None,
) -> str:
    """A one-input, one-output decision table: `rules` are (input entry, output entry) pairs."""
    rows = "".join(
        f'<rule id="r{n}"><inputEntry id="i{n}"><text>{test}</text></inputEntry>'
        f'<outputEntry id="o{n}"><text>{value}</text></outputEntry></rule>'
        for n, (test, value) in enumerate(rules, 1)
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><definitions xmlns="{DMN}" id="defs_{decision_id}"'
        f' name="{decision_id}" namespace="http://flowdesk.test">'
        f'<decision id="{decision_id}" name="{name or decision_id}">'
        f'<decisionTable id="t_{decision_id}" hitPolicy="{hit_policy}">'
        f'<input id="in1" label="{input_text}"><inputExpression id="e1" typeRef="{input_type}">'
        f"<text>{input_text}</text></inputExpression></input>"
        f'<output id="out1" name="{output}" typeRef="{output_type}"/>{rows}'
        "</decisionTable></decision></definitions>"
    )


def publish_decision(xml: str | bytes, key: str, partition: str | None = None) -> Any:
    """Import the DMN file `xml` into decision model `key` (created in `partition` the first
    time) and publish it, through the decisions service as a modeller would; needs an app
    context. Returns the DecisionVersion."""
    from webapp.extensions import db
    from webapp.models import Partition
    from webapp.models.decisions import DecisionModel
    from webapp.services import decisions

    model = db.session.scalar(select(DecisionModel).where(DecisionModel.key == key))
    if model is None:
        partition_id = None
        if partition:
            partition_id = db.session.scalar(select(Partition.id).where(Partition.key == partition))
            assert partition_id, f"no partition {partition}"
        model, _ = decisions.import_new(xml, key=key, partition_id=partition_id, actor=None)
    else:
        decisions.import_draft(model, xml, base_revision=model.draft_revision, actor=None)
    version = decisions.publish(model, actor=None)
    db.session.commit()
    return version


def publish_decision_file(name: str, key: str, partition: str | None = None) -> Any:
    """Publish the DMN file `name` of tests/differential/files."""
    return publish_decision((FILES / name).read_bytes(), key, partition)
