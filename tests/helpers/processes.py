"""Publishing processes the way the service would not: without validation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from tests.helpers.documents import waiting_doc

if TYPE_CHECKING:
    from webapp.models import ProcessVersion


def publish_without_validation(doc: dict, key: str) -> ProcessVersion:
    """A version of `doc` that publishing refuses (an unsupported script language, a link throw
    with no catch): what the engine does if one exists anyway. Needs an app context."""
    from webapp.extensions import db
    from webapp.models import ProcessVersion
    from webapp.services import processes

    process = processes.create_process(key, key, partition_id=None, actor=None, document=doc)
    db.session.flush()
    version = ProcessVersion(
        process_id=process.id,
        number=1,
        document=process.draft_document,
        bpmn_xml=process.draft_xml or "",
        content_hash=process.draft_hash,
        change_note="",
    )
    db.session.add(version)
    db.session.commit()
    return db.session.scalar(select(ProcessVersion).where(ProcessVersion.process_id == process.id))


def publish_document(
    doc: dict[str, Any], key: str = "proc", partition: str | None = None, *, name: str | None = None
):
    """Create (or update) process `key` (called `name`) with `doc` and publish it; needs an app
    context."""
    from webapp.extensions import db
    from webapp.models import Partition, Process
    from webapp.services import processes

    partition_id = None
    if partition:
        partition_id = db.session.scalar(select(Partition.id).where(Partition.key == partition))
        assert partition_id, f"no partition {partition}"
    process = db.session.scalar(select(Process).where(Process.key == key))
    if process is None:
        process = processes.create_process(
            key, name or key, partition_id=partition_id, actor=None, document=doc
        )
    else:
        processes.save_draft(process, doc, base_revision=process.draft_revision, actor=None)
    db.session.flush()
    version = processes.publish(process, actor=None)
    db.session.commit()
    return version


def published(key: str, partition: str | None = None):
    """The latest version of process `key`, publishing a `waiting_doc` process the first time."""
    from webapp.extensions import db
    from webapp.models import Process, ProcessVersion

    found = db.session.scalar(
        select(ProcessVersion)
        .join(Process, Process.id == ProcessVersion.process_id)
        .where(Process.key == key)
        .order_by(ProcessVersion.number.desc())
    )
    return found or publish_document(waiting_doc(), key=key, partition=partition)
