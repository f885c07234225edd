"""Publishing a version WITHOUT validation or BPMN export, for documents publishing refuses
(a payload expression that does not parse) whose run-time behaviour a test still checks."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select


def publish_unchecked(doc: dict[str, Any], key: str = "proc", partition: str | None = None):
    """Store `doc` as the next published version of process `key` (created when new) and keep
    its event starts, as `processes.publish` does, but with no validation and no BPMN export."""
    from webapp.extensions import db
    from webapp.models import Partition, Process, ProcessVersion
    from webapp.process import document as documents
    from webapp.services import event_starts
    from webapp.services.processes import ProcessError

    doc = documents.normalize(dict(doc, key=key, name=key))
    process = db.session.scalar(select(Process).where(Process.key == key))
    if process is None:
        partition_id = None
        if partition:
            partition_id = db.session.scalar(select(Partition.id).where(Partition.key == partition))
        process = Process(key=key, name=key, partition_id=partition_id, draft_document=doc)
        db.session.add(process)
        db.session.flush()
    number = db.session.scalar(
        select(func.max(ProcessVersion.number)).where(ProcessVersion.process_id == process.id)
    )
    version = ProcessVersion(
        process_id=process.id,
        number=(number or 0) + 1,
        document=doc,
        bpmn_xml="",
        content_hash=documents.content_hash(doc),
    )
    db.session.add(version)
    db.session.flush()
    event_starts.keep(process, version, ProcessError)
    db.session.commit()
    return version
