"""The corpus's compensation file, miwg C.6.0 (travel booking), run in Flowdesk: SpiffWorkflow
cannot load it (it refuses compensation events), so this checks it against BPMN 2.0.2 itself.

The modeller's part after importing it, as for any imported file: a plain start instead of its
message start (the harness starts instances by hand), tools for its service and send tasks, and
durations for its two empty timers. A failed credit card charge (a business error) then throws
compensation at the process level: the completed "Make Booking" sub-process runs its compensation
event sub-process, whose two throws run the hotel's and the flight's handlers, each once."""

from __future__ import annotations

import pytest

from tests.helpers.compensation import entered_nodes
from tests.helpers.corpus import corpus_dir
from tests.helpers.instances import load, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import steps
from webapp.services import processes
from webapp.services.jobs import commit

CORPUS = corpus_dir()
FILE = "miwg-test-suite/reference/C.6.0.bpmn"
CHARGE = "_614d6469-2bb8-4ad6-a20a-db5db6321c6b"
BOOK_HOTEL = "_b595ec43-0769-4864-8f2e-403c405c8217"
BOOK_FLIGHT = "_ea5cc55d-bfce-49c6-8a1a-a8a41a85da12"
CANCEL_HOTEL = "_3a2f133c-3ae1-4e21-94b5-6e8cf51acd74"
CANCEL_FLIGHT = "_0198160d-b56c-4919-9920-db5f32d16b3f"
HANDLE_COMPENSATION = "_e880bf53-84ca-4776-aa75-d1bf53172240"
NOTIFY_FAILED = "_2d6586cf-81fc-4e2a-83ec-6cfff5b34bb0"
CONFIRM = "_22612d45-65ca-4a74-a6eb-53af7ebcb5ff"


def _bound(declined: bool) -> dict:
    assert CORPUS is not None
    doc = processes.read_upload((CORPUS / FILE).read_bytes()).document
    for node_id, node in doc["nodes"].items():
        config = node["config"]
        if node["kind"] == "startEvent" and node.get("parent") is None:
            config.clear()
        if node["kind"] in ("serviceTask", "sendTask"):
            config.update(tool="noop", inputs={})
        if config.get("event") == "timer" or node["kind"] == "timerCatch":
            config.pop("date", None)
            config["duration"] = "P1D"
        if node_id == CHARGE:
            config.update(tool="test.business", inputs={"code": "'DECLINED'" if declined else "''"})
    return doc


@pytest.mark.skipif(CORPUS is None, reason="the BPMN corpus is not available")
@pytest.mark.parametrize("declined", [True, False])
def test_a_declined_charge_compensates_the_booking_through_its_event_sub_process(
    engine, test_tools, declined
):
    version = publish_document(_bound(declined), key=f"travel_{declined}")
    instance_id = start(engine, version, business_key="trip-1")
    drain(engine)
    commit(steps.deliver_message(engine, instance_id, "Offer Approved", "trip-1", {}))
    drain(engine)
    instance = load(engine, instance_id)
    assert instance.status == "completed", instance.error
    names = entered_nodes(engine, instance_id)
    assert names.count(BOOK_HOTEL) == names.count(BOOK_FLIGHT) == 1
    if declined:
        assert names.count(CANCEL_HOTEL) == names.count(CANCEL_FLIGHT) == 1
        assert names.index(HANDLE_COMPENSATION) < names.index(CANCEL_HOTEL)
        assert NOTIFY_FAILED in names and CONFIRM not in names
    else:
        assert CANCEL_HOTEL not in names and CANCEL_FLIGHT not in names
        assert CONFIRM in names
