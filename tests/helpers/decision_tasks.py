"""Published DMN decisions for the business rule task tests: a decision model version stored as publishing stores one
(document, XML and one provision row per decision id), and small DMN files to publish."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import func, select

FILES = Path(__file__).resolve().parent.parent / "differential" / "files"

DMN = "https://www.omg.org/spec/DMN/20191111/MODEL/"


def table_dmn(
    decision_id: str,
    rules: list[tuple[str, str]],
    *,
    input_text: str = "amount",
    hit_policy: str = "UNIQUE",
    output: str = "discount",
    output_type: str = "number",
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
        f'<decision id="{decision_id}" name="{decision_id}">'
        f'<decisionTable id="t_{decision_id}" hitPolicy="{hit_policy}">'
        f'<input id="in1" label="{input_text}"><inputExpression id="e1" typeRef="number">'
        f"<text>{input_text}</text></inputExpression></input>"
        f'<output id="out1" name="{output}" typeRef="{output_type}"/>{rows}'
        "</decisionTable></decision></definitions>"
    )


def publish_decision(xml: str | bytes, key: str, partition: str | None = None) -> Any:
    """Publish the DMN file `xml` as the next version of decision model `key` (created in
    `partition` the first time); needs an app context. Returns the DecisionVersion."""
    from webapp.extensions import db
    from webapp.models import Partition
    from webapp.models.decisions import DecisionModel, DecisionProvision, DecisionVersion
    from webapp.process import dmn

    read = dmn.read_dmn(xml)
    blocking = [p for p in read.problems if p.blocking]
    assert not blocking, blocking
    model = db.session.scalar(select(DecisionModel).where(DecisionModel.key == key))
    if model is None:
        partition_id = None
        if partition:
            partition_id = db.session.scalar(select(Partition.id).where(Partition.key == partition))
            assert partition_id, f"no partition {partition}"
        model = DecisionModel(key=key, name=key, partition_id=partition_id)
        db.session.add(model)
        db.session.flush()
    number = (
        db.session.scalar(
            select(func.max(DecisionVersion.number)).where(DecisionVersion.model_id == model.id)
        )
        or 0
    ) + 1
    text = xml.decode() if isinstance(xml, bytes) else xml
    version = DecisionVersion(
        model_id=model.id, number=number, document=read.document, xml=text, examples=[]
    )
    db.session.add(version)
    db.session.flush()
    for decision_id in dmn.decision_ids(read.document):
        db.session.add(
            DecisionProvision(version_id=version.id, model_id=model.id, decision_id=decision_id)
        )
    db.session.commit()
    return version


def publish_decision_file(name: str, key: str, partition: str | None = None) -> Any:
    """Publish the DMN file `name` of tests/differential/files."""
    return publish_decision((FILES / name).read_bytes(), key, partition)
