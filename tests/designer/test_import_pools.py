"""Importing a file with several pools: the page lists their processes and imports the one the
person picks, carrying the file through the second step; the other pools are kept."""

from __future__ import annotations

import base64
import io
from pathlib import Path

from sqlalchemy import func, select

from tests.helpers.bpmn import CALLS, SIGNAVIO
from tests.helpers.designer import carried, finance, get_process, post_form
from webapp.models import Process
from webapp.process.bpmn import export_bpmn, import_bpmn

CLAIMS = (Path(__file__).parents[1] / "browser" / "files" / "camunda7_claims.bpmn").read_bytes()


def count(db_session) -> int:
    return db_session.scalar(select(func.count(Process.id)))


def test_the_page_lists_the_pools_and_imports_the_one_picked(designer, db_session):
    first = post_form(
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

    wrong = post_form(
        designer,
        "/designer/import",
        carried=carried(page),
        pool="nope",
        partition=finance(db_session),
    )
    assert wrong.status_code == 422 and count(db_session) == 0
    assert "Choose one of the processes listed." in wrong.get_data(as_text=True)

    done = post_form(
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
    first = post_form(designer, path, file=(io.BytesIO(CLAIMS), "c.bpmn"), revision=revision)
    assert first.status_code == 200 and "Claim payment" in first.get_data(as_text=True)
    done = post_form(
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
        response = post_form(designer, "/designer/import", partition=finance(db_session), **data)
        assert response.status_code == 422
        assert "Choose a .bpmn file." in response.get_data(as_text=True)
    assert count(db_session) == 0


def test_a_file_flowdesk_wrote_is_read_as_its_own_process_without_a_question(designer, db_session):
    exported = export_bpmn(import_bpmn(CLAIMS, process_id="claims_payment").document)
    response = post_form(
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
    first = post_form(
        designer,
        "/designer/import",
        file=(io.BytesIO(big), "big.bpmn"),
        partition=finance(db_session),
    )
    assert first.status_code == 200, first.status_code
    done = post_form(
        designer,
        "/designer/import",
        carried=carried(first.get_data(as_text=True)),
        pool="claims_payment",
        key="big",
        partition=finance(db_session),
    )
    assert done.status_code == 302, done.status_code


def test_every_process_of_a_file_is_imported_at_once_so_calls_between_them_work(
    designer, make_process, db_session
):
    from webapp.services import processes

    first = post_form(designer, "/designer/import", file=(io.BytesIO(CALLS), "calls.bpmn"),
                 partition=finance(db_session))  # fmt: skip
    page = first.get_data(as_text=True)
    assert "All 2, each as a process of its own" in page
    done = post_form(designer, "/designer/import", carried=carried(page), pool="*",
                partition=finance(db_session))  # fmt: skip
    assert done.status_code == 302, done.get_data(as_text=True)
    assert "import-report" in done.headers["Location"]
    made = {p.key: p for p in db_session.scalars(select(Process)).all()}
    assert set(made) == {"caller", "callee"}
    assert {p.partition_id for p in made.values()} == {finance(db_session)}
    assert {p["code"] for p in made["caller"].draft_problems} == {"call.process_unknown"}
    processes.publish(made["callee"], actor=None)
    assert processes.publish(made["caller"], actor=None).number == 1

    again = post_form(designer, "/designer/import", carried=carried(page), pool="*",
                 partition=finance(db_session))  # fmt: skip
    assert again.status_code == 422 and count(db_session) == 2
    assert "nothing was imported" in again.get_data(as_text=True)

    pid = make_process()
    revision = get_process(db_session, pid).draft_revision
    path = f"/designer/{pid}/import"
    draft = post_form(designer, path, file=(io.BytesIO(CALLS), "c.bpmn"), revision=revision)
    assert "All 2" not in draft.get_data(as_text=True), "a draft takes one process"


def test_a_generated_process_id_gives_a_key_from_the_name_shown_first(designer, db_session):
    first = post_form(designer, "/designer/import", file=(io.BytesIO(SIGNAVIO), "o.bpmn"),
                 partition=finance(db_session))  # fmt: skip
    page = first.get_data(as_text=True)
    assert first.status_code == 200 and count(db_session) == 0
    assert "Check the key before importing: <strong>order-handling</strong>" in page
    assert 'name="key" type="text" value="order-handling"' in page
    done = post_form(designer, "/designer/import", carried=carried(page), key="order-handling",
                partition=finance(db_session))  # fmt: skip
    assert done.status_code == 302, done.get_data(as_text=True)
    assert db_session.scalar(select(Process.key)) == "order-handling"
    again = post_form(designer, "/designer/import", file=(io.BytesIO(SIGNAVIO), "o.bpmn"),
                 partition=finance(db_session))  # fmt: skip
    assert "<strong>order-handling-2</strong>" in again.get_data(as_text=True), "a free key"


def test_the_pool_chooser_shortens_generated_ids_and_shows_the_key(designer, db_session):
    two = SIGNAVIO.replace(
        b"</definitions>",
        b'<process id="sid-2222A358-1C2B-4E5F-9A0B-1234567890AB" isExecutable="false">'
        b'<startEvent id="sid-B1" name="Paid"/></process></definitions>',
    )
    page = post_form(designer, "/designer/import", file=(io.BytesIO(two), "o.bpmn"),
                partition=finance(db_session)).get_data(as_text=True)  # fmt: skip
    assert "Order handling (becomes order-handling, 3 elements): Check order…</label>" in page
    assert (
        "sid-2222A358-1C2B-4E…" in page and "sid-2222A358-1C2B-4E5F-9A0B-1234567890AB (" not in page
    )
