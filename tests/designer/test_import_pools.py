"""Importing a file with several pools: the page lists their processes and imports the one the
person picks, carrying the file through the second step; the other pools are kept."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

from sqlalchemy import func, select

from tests.designer.conftest import get_process, token
from webapp.models import Partition, Process
from webapp.process.bpmn import export_bpmn, import_bpmn

CLAIMS = (Path(__file__).parents[1] / "browser" / "files" / "camunda7_claims.bpmn").read_bytes()


def finance(db_session) -> int:
    return db_session.scalar(select(Partition.id).where(Partition.key == "finance"))


def post(client, path, **data):
    body = {"csrf_token": token(client, path), **data}
    return client.post(path, data=body, content_type="multipart/form-data")


def carried(page: str) -> str:
    found = re.search(r'name="carried" type="hidden" value="([^"]*)"', page)
    assert found, "the file is carried to the second step"
    return found.group(1)


def count(db_session) -> int:
    return db_session.scalar(select(func.count(Process.id)))


def test_the_page_lists_the_pools_and_imports_the_one_picked(designer, db_session):
    first = post(
        designer,
        "/designer/import",
        file=(io.BytesIO(CLAIMS), "claims.bpmn"),
        partition=finance(db_session),
    )
    page = first.get_data(as_text=True)
    assert first.status_code == 200 and count(db_session) == 0
    assert "This file has 2 processes (pools)" in page
    assert (
        "Claims handling (becomes claims_handling, 5 elements): Claim received, Review claim, "
        "Approved?, Claim paid…" in page
    )
    assert "Claim payment (becomes claims_payment, 3 elements): Payment ordered, Pay claim" in page
    assert base64.b64decode(carried(page)) == CLAIMS

    wrong = post(
        designer,
        "/designer/import",
        carried=carried(page),
        pool="nope",
        partition=finance(db_session),
    )
    assert wrong.status_code == 422 and count(db_session) == 0
    assert "Choose one of the processes listed." in wrong.get_data(as_text=True)

    done = post(
        designer,
        "/designer/import",
        carried=carried(page),
        pool="claims_payment",
        key="payments",
        partition=finance(db_session),
    )
    assert done.status_code == 302, done.get_data(as_text=True)
    process = db_session.scalar(select(Process).where(Process.key == "payments"))
    assert list(process.draft_document["nodes"]) == ["Start_payment", "Task_pay", "End_payment"]
    assert process.draft_document["kept"]["pool"] == "Participant_payments"
    xml = process.draft_xml
    assert 'id="Participant_payments" name="Payments" processRef="payments"' in xml
    assert 'processRef="claims_handling"' in xml and 'id="MessageFlow_pay"' in xml
    report = designer.get(done.headers["Location"]).get_data(as_text=True)
    assert "2 pools" in report and "1 message flow<" in report
    assert "1 process of another pool" in report


def test_a_draft_import_picks_a_pool_too(designer, make_process, db_session):
    pid = make_process()
    revision = get_process(db_session, pid).draft_revision
    path = f"/designer/{pid}/import"
    first = post(designer, path, file=(io.BytesIO(CLAIMS), "c.bpmn"), revision=revision)
    assert first.status_code == 200 and "Claim payment" in first.get_data(as_text=True)
    done = post(
        designer,
        path,
        carried=carried(first.get_data(as_text=True)),
        pool="claims_handling",
        revision=revision,
    )
    assert done.status_code == 302
    draft = get_process(db_session, pid).draft_document
    assert "Task_review" in draft["nodes"] and draft["kept"]["pool"] == "Participant_claims"


def test_no_file_and_a_broken_carried_file_are_refused(designer, db_session):
    for data in ({}, {"carried": "%%% not base64"}):
        response = post(designer, "/designer/import", partition=finance(db_session), **data)
        assert response.status_code == 422
        assert "Choose a .bpmn file." in response.get_data(as_text=True)
    assert count(db_session) == 0


def test_a_file_flowdesk_wrote_is_read_as_its_own_process_without_a_question(designer, db_session):
    exported = export_bpmn(import_bpmn(CLAIMS, process_id="claims_payment").document)
    response = post(
        designer,
        "/designer/import",
        file=(io.BytesIO(exported.encode()), "again.bpmn"),
        key="again",
        partition=finance(db_session),
    )
    assert response.status_code == 302
    process = db_session.scalar(select(Process).where(Process.key == "again"))
    assert "Task_pay" in process.draft_document["nodes"]


def test_a_large_file_is_carried_past_the_form_field_limit(designer, db_session):
    """Werkzeug limits a form field to 500 kB; the carried file may be up to the upload limit."""
    padding = b"<!--" + b"x" * 1_500_000 + b"-->\n"
    big = CLAIMS.replace(b"<bpmn:definitions", padding + b"<bpmn:definitions", 1)
    first = post(
        designer,
        "/designer/import",
        file=(io.BytesIO(big), "big.bpmn"),
        partition=finance(db_session),
    )
    assert first.status_code == 200, first.status_code
    done = post(
        designer,
        "/designer/import",
        carried=carried(first.get_data(as_text=True)),
        pool="claims_payment",
        key="big",
        partition=finance(db_session),
    )
    assert done.status_code == 302, done.status_code


CALLS = b"""<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"
    targetNamespace="http://x">
  <bpmn:process id="caller" name="Caller" isExecutable="true">
    <bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="call"/>
    <bpmn:callActivity id="call" name="Run callee" calledElement="callee"/>
    <bpmn:sequenceFlow id="f2" sourceRef="call" targetRef="e"/><bpmn:endEvent id="e"/>
  </bpmn:process>
  <bpmn:process id="callee" name="Callee" isExecutable="true">
    <bpmn:startEvent id="cs"/><bpmn:sequenceFlow id="c1" sourceRef="cs" targetRef="ce"/>
    <bpmn:endEvent id="ce"/>
  </bpmn:process>
</bpmn:definitions>"""


def test_every_process_of_a_file_is_imported_at_once_so_calls_between_them_work(
    designer, make_process, db_session
):
    from webapp.services import processes

    first = post(designer, "/designer/import", file=(io.BytesIO(CALLS), "calls.bpmn"),
                 partition=finance(db_session))  # fmt: skip
    page = first.get_data(as_text=True)
    assert "All 2, each as a process of its own" in page
    done = post(designer, "/designer/import", carried=carried(page), pool="*",
                partition=finance(db_session))  # fmt: skip
    assert done.status_code == 302, done.get_data(as_text=True)
    assert "import-report" in done.headers["Location"]
    made = {p.key: p for p in db_session.scalars(select(Process)).all()}
    assert set(made) == {"caller", "callee"}
    assert {p.partition_id for p in made.values()} == {finance(db_session)}
    assert {p["code"] for p in made["caller"].draft_problems} == {"call.process_unknown"}
    processes.publish(made["callee"], actor=None)
    assert processes.publish(made["caller"], actor=None).number == 1

    again = post(designer, "/designer/import", carried=carried(page), pool="*",
                 partition=finance(db_session))  # fmt: skip
    assert again.status_code == 422 and count(db_session) == 2
    assert "nothing was imported" in again.get_data(as_text=True)

    pid = make_process()
    revision = get_process(db_session, pid).draft_revision
    path = f"/designer/{pid}/import"
    draft = post(designer, path, file=(io.BytesIO(CALLS), "c.bpmn"), revision=revision)
    assert "All 2" not in draft.get_data(as_text=True), "a draft takes one process"


SIGNAVIO = b"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="sid-d" targetNamespace="x">
  <process id="sid-7911A358-1C2B-4E5F-9A0B-1234567890AB" name="Order handling"
      isExecutable="false">
    <startEvent id="sid-A1"/>
    <sequenceFlow id="sid-F1" sourceRef="sid-A1" targetRef="sid-A2"/>
    <userTask id="sid-A2" name="Check order"/>
    <sequenceFlow id="sid-F2" sourceRef="sid-A2" targetRef="sid-A3"/>
    <endEvent id="sid-A3"/>
  </process>
</definitions>"""


def test_a_generated_process_id_gives_a_key_from_the_name_shown_first(designer, db_session):
    first = post(designer, "/designer/import", file=(io.BytesIO(SIGNAVIO), "o.bpmn"),
                 partition=finance(db_session))  # fmt: skip
    page = first.get_data(as_text=True)
    assert first.status_code == 200 and count(db_session) == 0
    assert "Check the key before importing: <strong>order-handling</strong>" in page
    assert 'name="key" type="text" value="order-handling"' in page
    done = post(designer, "/designer/import", carried=carried(page), key="order-handling",
                partition=finance(db_session))  # fmt: skip
    assert done.status_code == 302, done.get_data(as_text=True)
    assert db_session.scalar(select(Process.key)) == "order-handling"
    again = post(designer, "/designer/import", file=(io.BytesIO(SIGNAVIO), "o.bpmn"),
                 partition=finance(db_session))  # fmt: skip
    assert "<strong>order-handling-2</strong>" in again.get_data(as_text=True), "a free key"


def test_the_pool_chooser_shortens_generated_ids_and_shows_the_key(designer, db_session):
    two = SIGNAVIO.replace(
        b"</definitions>",
        b'<process id="sid-2222A358-1C2B-4E5F-9A0B-1234567890AB" isExecutable="false">'
        b'<startEvent id="sid-B1" name="Paid"/></process></definitions>',
    )
    page = post(designer, "/designer/import", file=(io.BytesIO(two), "o.bpmn"),
                partition=finance(db_session)).get_data(as_text=True)  # fmt: skip
    assert "Order handling (becomes order-handling, 3 elements): Check order…</label>" in page
    assert (
        "sid-2222A358-1C2B-4E…" in page and "sid-2222A358-1C2B-4E5F-9A0B-1234567890AB (" not in page
    )
