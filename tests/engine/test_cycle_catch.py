"""Intermediate timer catches with a cycle (jBPM and Flowable files): they fire once, at the
cycle's first occurrence, and import, validate and export as such."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lxml import etree
from sqlalchemy import select

from tests.helpers.bpmn import definitions
from tests.helpers.documents import chain, node
from tests.helpers.instances import history, load, start
from tests.helpers.processes import publish_document
from tests.helpers.validation import found
from webapp.engine import steps
from webapp.models import Job
from webapp.models.base import utcnow
from webapp.process.bpmn import export_bpmn, import_bpmn
from webapp.process.bpmn.namespaces import BPMN, q
from webapp.process.validation import validate
from webapp.services.jobs import commit

CYCLE_CATCH = """
  <{p}process id="p" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}intermediateCatchEvent id="tick"><{p}timerEventDefinition>
      <{p}timeCycle>R3/PT1H</{p}timeCycle></{p}timerEventDefinition></{p}intermediateCatchEvent>
    <{p}endEvent id="e"/>
    <{p}sequenceFlow id="f1" sourceRef="s" targetRef="tick"/>
    <{p}sequenceFlow id="f2" sourceRef="tick" targetRef="e"/>
  </{p}process>
"""


def test_a_cycle_catch_imports_publishes_and_exports_its_cycle() -> None:
    result = import_bpmn(definitions(CYCLE_CATCH))
    assert result.unsupported == []
    tick = result.document["nodes"]["tick"]
    assert (tick["kind"], tick["config"]) == ("timerCatch", {"cycle": "R3/PT1H"})
    assert [p for p in validate(result.document) if p.severity == "error"] == []
    root = etree.fromstring(export_bpmn(result.document).encode())
    cycle = next(e for e in root.iter(q(BPMN, "timeCycle")))
    assert cycle.text == "R3/PT1H"


def test_a_catch_takes_one_timer_setting_and_a_valid_cycle() -> None:
    both = chain(("tick", node("timerCatch", duration="PT1H", cycle="R/PT1H")))
    assert ("config.invalid", "tick") in found(validate(both))
    bad = chain(("tick", node("timerCatch", cycle="every hour")))
    assert ("cycle.invalid", "tick") in found(validate(bad))


def test_a_cycle_catch_fires_once_at_the_first_occurrence(engine):
    version = publish_document(chain(("tick", node("timerCatch", cycle="R3/PT1H"))))
    before = utcnow()
    instance_id = start(engine, version)
    job = engine.scalar(select(Job).where(Job.instance_id == instance_id))
    assert timedelta(hours=1) <= job.due_at - before < timedelta(hours=1, seconds=5)
    job_id, due = job.id, job.due_at
    engine.rollback()
    commit(steps.fire_timer(engine, job_id, instance_id, now=due + timedelta(seconds=1)))
    assert load(engine, instance_id).status == "completed"
    assert [k for k, _ in history(engine, instance_id)].count("timer") == 1
    assert engine.scalar(select(Job.status).where(Job.id == job_id)) == "done"


def test_a_cycle_with_a_first_date_waits_for_that_date(engine):
    cycle = "R2/2031-05-01T08:00:00Z/P1D"
    version = publish_document(chain(("tick", node("timerCatch", cycle=cycle))))
    instance_id = start(engine, version)
    due = engine.scalar(select(Job.due_at).where(Job.instance_id == instance_id))
    assert due.replace(tzinfo=due.tzinfo or UTC) == datetime(2031, 5, 1, 8, tzinfo=UTC)
