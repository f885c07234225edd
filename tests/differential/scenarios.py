"""The scenario table: per file, the start input, the user tasks' answers and the service tasks'
stub results, and each condition as Flowdesk and as Spiff (Python) reads it where the file's own
text does not run in one of them. Corpus files are keyed by their path in the corpus, the
hand-made ones by `files/<name>`. A file without an entry runs with empty answers and results.

The importer maps a bare name `x` to `$vars.x` and marks files of other tools with the process
variables pool (docs/process-format.md), so start input, answers and tool results land in `$vars`
as in Spiff's flat namespace: the importer's translation runs as it is, and only Spiff needs a
Python condition where the file's is JUEL or FEEL (`Cond(python=...)`). Older entries still read
`$nodes.<task>.<name>`, which gives the same result.
"""

from __future__ import annotations

import itertools
from typing import Any

from tests.differential.scenario import Cond, Scenario, Script, Timer


def out(node_id: str, path: str) -> str:
    """A Flowdesk path into a node's output (ids with dashes need the bracket form)."""
    return f"$nodes['{node_id}'].{path}"


def _answer_is(node_id: str, name: str, value: str) -> Cond:
    return Cond(f"{out(node_id, name)} == '{value}'", f"{name} == '{value}'")


def _vacation(*rounds: tuple[str, str | None]) -> Scenario:
    """VacationRequest: each round is the manager's decision and, after a rejection, whether
    the employee sends the request again."""
    return Scenario(
        answers={
            "handleRequest": [{"vacationApproved": decision} for decision, _ in rounds],
            "adjustVacationRequestTask": [{"resendRequest": again} for _, again in rounds if again],
        },
        conditions={
            "flow3": Cond(python="vacationApproved == 'Approve'"),
            "flow5": Cond(python="vacationApproved == 'Reject'"),
            "flow7": Cond(python="resendRequest == 'Yes'"),
            "flow8": Cond(python="resendRequest == 'No'"),
        },
        note="a loop back to the manager through an exclusive gateway",
    )


_VACATION = [
    _vacation(("Approve", None)),
    _vacation(("Reject", "No")),
    _vacation(("Reject", "Yes"), ("Reject", "Yes"), ("Approve", None)),
]

_PUBLICATION = "camunda-bpm-examples/camunda-testing-job-announcement-publication.bpmn"
_PUBLICATION_CONDITIONS = {
    "Flow_0zn9zem": Cond(python="twitter"),
    "Flow_0cpvktx": Cond(python="not twitter"),
    "Flow_1oretgu": Cond(python="facebook"),
    "Flow_0jly80u": Cond(python="not facebook"),
}

_DEFAULT_FLOW = "camunda-bpm-platform/ExclusiveGatewayTest.testDefaultSequenceFlow.bpmn20.xml"
_CUSTOMER = "Task_0n2pfas"
_CHOICE = "sid-CA089240-802A-4C32-9130-FB1A33DDCCC3"
_SET_DATA = "Activity_1ghr6kd"
_NEED_CLARIFICATION = {"key": "NeedClarification", "label": "Clarification?", "type": "text"}
_CHANGE_TYPE = "sid-6C039219-F210-4984-B366-11C77DB35229"
_TEST_MESSAGE = "sid-067AF0E4-F644-4962-BC02-E767C63647D5"
_LONG_TASK = "sid-6FBBB56D-00CD-4C2B-9345-486986BB4992"

SCENARIOS: dict[str, Scenario | list[Scenario]] = {
    _PUBLICATION: [
        Scenario(input={"twitter": True, "facebook": False}, conditions=_PUBLICATION_CONDITIONS),
        Scenario(input={"twitter": False, "facebook": True}, conditions=_PUBLICATION_CONDITIONS),
    ],
    "camunda-bpm-examples/invokeRestService.bpmn": [
        Scenario(
            results={"ServiceTask_1": {"isHoliday": holiday}},
            conditions={
                "SequenceFlow_3": Cond(python="isHoliday"),
                "SequenceFlow_4": Cond(python="not isHoliday"),
            },
        )
        for holiday in (True, False)
    ],
    "camunda-bpm-examples/process.bpmn": [
        Scenario(
            results={_CUSTOMER: {"customer": {"age": age}}},
            conditions={
                "SequenceFlow_4": Cond(
                    f"$nodes.{_CUSTOMER}.customer.age >= 21", "customer['age'] >= 21"
                ),
                "SequenceFlow_5": Cond(
                    f"$nodes.{_CUSTOMER}.customer.age < 21", "customer['age'] < 21"
                ),
            },
            note="Camunda Spin's customer.prop('age').numberValue() read as a plain object",
        )
        for age in (30, 18)
    ],
    "camunda-bpm-platform/ExclusiveGatewayTest.testBigLoop.bpmn": Scenario(
        input={"numOfIterations": 3},
        results={"ScriptTask_1": {"i": 0}, "ManualTask_1": [{"i": n} for n in (1, 2, 3, 4)]},
        conditions={
            "SequenceFlow_5": Cond(
                "$nodes.ManualTask_1.i <= $input.numOfIterations", "i <= numOfIterations"
            )
        },
        note="a loop through two exclusive gateways, the first one merging",
    ),
    _DEFAULT_FLOW: [
        Scenario(
            input={"input": value},
            conditions={
                "flow2": Cond(python="input == 1"),
                "flow4": Cond(python="input == 3"),
            },
            answer_all=False,
            note="the default flow is listed between two conditional ones",
        )
        for value in (1, 2, 3)
    ],
    "camunda-bpm-platform/MessageIntermediateEventTest.testSingleIntermediateMessageEvent"
    ".bpmn20.xml": Scenario(messages=(("newInvoiceMessage", {"invoice": 7}),)),
    "flowable-examples/VacationRequest.bpmn20.xml": _VACATION,
    "miwg-test-suite/reference/C.9.1.bpmn": Scenario(
        input={"documentReferenceId": "D-1"},
        note="the receive task's zeebe correlation key reads the process variable "
        "documentReferenceId, which a start in Zeebe is given with the instance",
    ),
    "spiffworkflow/collaboration.bpmn": Scenario(
        input={"lover_name": "Ann"},
        note="the buddy's pool runs; Spiff computes the letter's correlation from lover_name, "
        "then both wait for the response",
    ),
    "spiffworkflow/Messages.bpmn20.xml": Scenario(
        bind={"sid-DF69AC93-16C3-405D-9FB1-9B2539519372": {"message": "Test Message"}},
        messages=(("Test Message", {}),),
        note="the catch has no messageRef: Spiff takes the event's name, Flowdesk needs one given",
    ),
    "spiffworkflow/Parallel-Then-Exclusive-No-Inclusive.bpmn20.xml": [
        Scenario(
            answers={_CHOICE: {"choice": choice}},
            conditions={
                "sid-9C753C3D-F964-45B0-AF57-234F910529EF": Cond(out(_CHOICE, "choice == 'Yes'")),
                "sid-3742C960-71D0-4342-8064-AF1BB9EECB42": Cond(out(_CHOICE, "choice == 'No'")),
            },
            note="an exclusive split and merge inside one branch of a parallel split",
        )
        for choice in ("Yes", "No")
    ],
    "spiffworkflow/token_trial_parallel_simple.bpmn": [
        Scenario(
            answers={_SET_DATA: {"skipParallel": skip}},
            conditions={
                "Flow_0f6q83k": Cond(f"$nodes.{_SET_DATA}.skipParallel == false"),
                "Flow_0wycgzo": Cond(f"$nodes.{_SET_DATA}.skipParallel == true"),
            },
        )
        for skip in (True, False)
    ],
    "spiffworkflow/gateway_loop_input.bpmn": Scenario(
        refused="parallel.deadlock",
        note="a loop enters a parallel join through a second incoming flow; BPMN 2.0.2 §13.4.1 "
        "makes the first token wait for a token on every incoming flow, so the instance never "
        "goes on; Spiff runs it anyway, Flowdesk refuses to publish it",
    ),
    "spiffworkflow/timer-date-start.bpmn": Scenario(
        results={"Activity_1q1wged": {"futuredate": "2031-05-01T10:00:00+00:00"}},
        timers={"Event_0eb0w95": Timer({"date": "$nodes.Activity_1q1wged.futuredate"})},
    ),
    "spiffworkflow/Timer-Intermediate.bpmn20.xml": Scenario(
        input={"due_time": "2031-05-01T10:00:00+00:00"},
        timers={"sid-AB1683F9-F260-499B-A04C-F7ADA9C64817": Timer({"date": "$input.due_time"})},
    ),
    # Files with structured elements (sub-processes, boundary events): skipped until Flowdesk
    # imports them.
    "camunda-bpm-platform/BoundaryTimerEventTest.testMultipleTimersOnUserTask.bpmn20.xml": [
        Scenario(expect=("completed", ()), note="the task is done before any timer"),
        Scenario(
            timers_first=True,
            expect=("completed", ()),
            note="three interrupting timers on one task: the earliest (PT1H) wins alone",
        ),
    ],
    "camunda-bpm-platform/BoundaryTimerNonInterruptingEventTest.testTimerOnEmbeddedSubprocess"
    ".bpmn20.xml": [
        Scenario(expect=("completed", ())),
        Scenario(timers_first=True, expect=("completed", ())),
    ],
    "spiffworkflow/timer-non-interrupt-boundary.bpmn": [
        Scenario(
            timers_first=True,
            answers={
                "Activity_Work": [{"work_done": "No"}, {"work_done": "Yes"}],
                "GetReason": {"delay_reason": "traffic"},
            },
            conditions={"Flow_10bimyk": Cond("$nodes.Activity_Work.work_done == 'Yes'")},
            expect=("completed", ()),
            note="a non-interrupting timer on a sub-process that loops, joined afterwards",
        ),
    ],
    "spiffworkflow/exclusive_gateway_no_default.bpmn": [
        Scenario(
            input={"x": x},
            conditions={
                "Flow_Greater1": Cond("$input.x > 1"),
                "Flow_Less1": Cond("$input.x < 1"),
            },
            expect=expect,
        )
        for x, expect in ((2, ("completed", ())), (1, ("failed", ("Gateway_CheckValue",))))
    ],
    "spiffworkflow/parallel_multiinstance_cardinality.bpmn": Scenario(
        answers={"any_task": [{"output_item": n} for n in (1, 2, 3)]},
        expect=("completed", ()),
    ),
    "camunda-bpm-examples/camunda-testing-job-announcement.bpmn": Scenario(
        called=(_PUBLICATION,),
        input={"jobAnnouncementId": 7, "twitter": True, "facebook": True},
        answers={"review": [{"approved": False}, {"approved": True}]},
        conditions={
            "Flow_1gfi885": Cond("$nodes.review.approved == true", "approved"),
            "Flow_0yjunvn": Cond("$nodes.review.approved != true", "not approved"),
            **_PUBLICATION_CONDITIONS,
        },
        bind={
            "publication": {
                "inputs": {
                    "jobAnnouncementId": "$input.jobAnnouncementId",
                    "facebook": "$input.facebook",
                    "twitter": "$input.twitter",
                }
            }
        },
        expect=("completed", ()),
        note="Camunda's call passes variables the start input holds in Flowdesk; one "
        "correction round, then the called publication posts to both networks",
    ),
    "miwg-test-suite/bpmn-io-18.6.1/A.3.0-export.bpmn": Scenario(
        bind={"Event_1uez1gc": {"message": "Message"}},
        refused="start.count",
        note="the collapsed sub-process is empty: with no start event and no activity inside "
        "it has nothing to run (BPMN 2.0.2 §10.2.5 instantiates the activities without "
        "incoming flows, and there are none); Flowdesk refuses to publish it",
    ),
    "spiffworkflow/timer-cycle.bpmn": Scenario(
        refused="node.outgoing_count",
        note="'Refill Coffee' has no outgoing flow; BPMN 2.0.2 §10.4.3 ends the token there "
        "(an implicit end), Flowdesk asks for an end event (docs/process-format.md)",
    ),
    "spiffworkflow/boundary_timer_on_task.bpmn": Scenario(
        refused="node.outgoing_count",
        note="'update timer_called' has no outgoing flow; BPMN 2.0.2 §10.4.3 ends the token "
        "there (an implicit end), Flowdesk asks for an end event (docs/process-format.md)",
    ),
    "spiffworkflow/lanes.bpmn": [
        Scenario(
            answers={"Activity_B1": {"NeedClarification": need}},
            conditions={"Flow_0okhwy0": Cond(out("Activity_B1", "NeedClarification == 'Yes'"))},
            bind={"Activity_B1": {"form": {"fields": [_NEED_CLARIFICATION]}}},
            expect=("completed", ()),
            note="the file's boolean form field defaults to 'No' and is compared with 'Yes': "
            "the modeller makes it a text field",
        )
        for need in ("Yes", "No")
    ],
    "spiffworkflow/data_object.bpmn": Scenario(
        answers={"generate_data": {"obj_1": "hello"}},
        expect=("completed", ()),
        note="data objects and their associations carry no behaviour in Flowdesk (kept as "
        "documentation); Spiff copies obj_1 between tasks and needs the first task to set it",
    ),
    "spiffworkflow/Scripts.bpmn20.xml": [
        Scenario(
            input={"priority": priority},
            answers={_CHANGE_TYPE: {"choice": choice}},
            conditions={
                "sid-0258E597-1879-4A66-B2A0-686F559D123E": _answer_is(
                    _CHANGE_TYPE, "choice", "Permanent"
                ),
                "sid-5457E966-E8F8-4E6A-AEDE-B4A1399CFAC2": _answer_is(
                    _CHANGE_TYPE, "choice", "Temporary"
                ),
                "sid-9928A8F9-83F2-4C6B-A253-FC3D161BD33C": Cond(
                    "$input.priority == 'Emergency'", "priority == 'Emergency'"
                ),
            },
            expect=("completed", ()),
            note="the file's condition `priority = 'Emergency'` is an assignment; the choice "
            "gateway has no conditions at all",
        )
        for choice, priority in (("Permanent", "Emergency"), ("Temporary", "Low"))
    ],
    "spiffworkflow/Message-Non-Interrupt.bpmn20.xml": [
        Scenario(
            bind={_TEST_MESSAGE: {"message": "Test Message"}},
            messages=(("Test Message", {}),),
            expect=("completed", ()),
            note="the work is done before the message: nobody waits for it any more",
        ),
        Scenario(
            bind={_TEST_MESSAGE: {"message": "Test Message"}},
            answers={_LONG_TASK: []},
            messages=(("Test Message", {}),),
            expect=("waiting", (_LONG_TASK,)),
            note="the message comes while the work is open: acknowledged, the work goes on",
        ),
    ],
    "flowable-examples/timer.bpmn20.xml": [
        Scenario(
            input={"timerDate": "2031-05-01T10:00:00+00:00"},
            timers={
                "intermediateTimerEventBoundary1": Timer({"date": "$input.timerDate"}, "timerDate")
            },
            timers_first=first,
            expect=("completed", ()),
            note="the task is escalated" if first else "the task is done in time",
        )
        for first in (True, False)
    ],
    "flowable-examples/Table_Reservation_v1.bpmn20.xml": [
        Scenario(
            input={"reservationTime": "2031-05-01T19:00:00+00:00", "showUp": show_up},
            timers={
                "intermediatetimereventcatching1": Timer(
                    {"date": "$input.reservationTime"}, "reservationTime"
                )
            },
            conditions={
                "sequenceflow6": Cond("$input.showUp == true", "showUp"),
                "sequenceflow7": Cond("$input.showUp != true", "not showUp"),
            },
            expect=("completed", ()),
            note="a timer until the reservation, then the guest shows up or not",
        )
        for show_up in (True, False)
    ],
    "spiffworkflow/call_activity_end_event.bpmn": Scenario(
        called=("spiffworkflow/call_activity_call_activity.bpmn",),
        note="a call activity whose process is in another file",
    ),
    "spiffworkflow/event-subprocess.bpmn": Scenario(
        spiff_alongside=True,
        spiff_extra={"Event_03f19jy": 1},
        expect=("completed", ()),
        note="the process throws `start_sub` in the step its interrupting event sub-process "
        "began listening in; the signal reaches it at once, and the interruption ends the "
        "throw's path before its end event. Spiff never reads isInterrupting: it runs the event "
        "sub-process alongside and also completes that end event",
    ),
    "flowable-examples/my-process.bpmn20.xml": [
        Scenario(expect=("completed", ())),
        Scenario(timers_first=True, expect=("completed", ())),
    ],
}


def scenarios_for(name: str) -> tuple[list[Scenario], bool]:
    """The scenarios of a file, and whether they were written for it."""
    entry = SCENARIOS.get(name)
    if entry is None:
        return [Scenario()], False
    return (entry if isinstance(entry, list) else [entry]), True


# --- hand-made files (tests/differential/files) ---------------------------------------------

SCENARIOS.update(
    {
        "files/flat-uncontrolled-merge.bpmn": Scenario(
            expect=("completed", ()),
            note="each token passes an uncontrolled merge on its own",
        ),
        "files/flat-unjoined-ends.bpmn": [
            Scenario(expect=("completed", ())),
            Scenario(answer_all=False, expect=("waiting", ("slow",))),
        ],
        "files/flat-exclusive-choices.bpmn": [
            Scenario(
                input={} if amount is None else {"amount": amount},
                conditions={
                    "big": Cond("$input.amount > 100"),
                    "positive": Cond("$input.amount > 0"),
                },
                expect=expect,
            )
            for amount, expect in (
                (500, ("completed", ())),
                (5, ("completed", ())),
                (0, ("failed", ("gw",))),
                (None, ("failed", ("gw",))),
            )
        ],
        "files/subprocess.bpmn": [
            Scenario(
                answers={"check": {"ok": ok}},
                conditions={"r3": Cond("$nodes.check.ok == false")},
                expect=("completed", ()),
            )
            for ok in (True, False)
        ],
        "files/subprocess-nested.bpmn": [
            Scenario(expect=("completed", ())),
            Scenario(
                answers={"side": {}}, answer_all=False, expect=("waiting", ("deep", "outer_join"))
            ),
        ],
        "files/boundary-timer-interrupting.bpmn": [
            Scenario(timers_first=True, expect=("completed", ()), note="the deadline passes"),
            Scenario(expect=("completed", ()), note="the draft is done in time"),
        ],
        "files/boundary-timer-non-interrupting.bpmn": [
            Scenario(timers_first=True, expect=("completed", ()), note="two reminders, then done"),
            Scenario(expect=("completed", ()), note="done before the first reminder"),
            Scenario(
                timers_first=True,
                answer_all=False,
                expect=("waiting", ("review",)),
                note="reminders do not close the task",
            ),
        ],
        "files/error-boundary.bpmn": [
            Scenario(
                results={"charge": {"status": status}},
                conditions={
                    "p3": Cond("$nodes.charge.status == 'declined'"),
                    "p4": Cond("$nodes.charge.status == 'fraud'"),
                },
                expect=("completed", ()),
                spiff_extra=extra,
                note=note,
            )
            for status, extra, note in (
                (
                    "declined",
                    {"on_any_error": 1, "investigate": 1, "end_other": 1},
                    "the boundary catching DECLINED wins over the catch-all (Camunda 8, "
                    "docs/process-format.md); Spiff triggers both interrupting boundaries, which "
                    "BPMN 2.0.2 §13.5.3 rules out: the first one cancels the activity",
                ),
                ("fraud", {}, "no boundary catches FRAUD by code: the catch-all does"),
                ("ok", {}, "no error"),
            )
        ],
        "files/signal-throw-catch.bpmn": Scenario(
            expect=("completed", ()),
            note="a signal thrown in one branch reaches the catch waiting in the other",
        ),
        "files/signal-event-subprocess.bpmn": Scenario(
            expect=("completed", ()),
            note="the throw's step ends the last path; the process's own event sub-process, "
            "listening since an earlier step, catches the signal before the instance can end",
        ),
        "files/signal-end-event-subprocess.bpmn": Scenario(
            expect=("completed", ()),
            spiff_missing={"on_done_start": 1, "archive": 1, "on_done_end": 1},
            note="the event sub-process begins to listen in the step whose signal end event "
            "ends the only path; the signal, thrown while the process is active, starts it. "
            "SpiffWorkflow 3.2 completes the process at a signal end event and never runs the "
            "event sub-process its signal triggered (it does after an intermediate throw, "
            "files/signal-event-subprocess.bpmn)",
        ),
        "files/signal-same-step.bpmn": Scenario(
            expect=("completed", ()),
            note="the boundary and the event sub-process subscribe in the step that throws: "
            "both catch the signal, the boundary interrupts the sub-process before its task",
        ),
        "files/signal-parallel-same-step.bpmn": Scenario(
            expect=("completed", ()),
            note="the split's first branch waits at the catch, the second throws in the same "
            "step: the catch receives it and the join completes",
        ),
        "files/signal-call-boundary.bpmn": Scenario(
            called=("files/signal-call-child.bpmn",),
            expect=("completed", ()),
            note="the called process throws and ends in one step; the call's interrupting "
            "signal boundary, listening at the throw, catches it before the call completes "
            "(Flowdesk's caller receives it in its resume step, before the child's end)",
        ),
        "files/signal-call-event-subprocess.bpmn": Scenario(
            called=("files/signal-call-child.bpmn",),
            expect=("completed", ()),
            note="the called process throws and ends in one step; the caller's event "
            "sub-process runs before completing the call could end the caller",
        ),
        "files/signal-call-child.bpmn": Scenario(
            expect=("completed", ()), note="run on its own, nothing catches its signal"
        ),
        "files/signal-parallel-later-catch.bpmn": Scenario(
            expect=("waiting", ("join", "wait")),
            spiff_expect=("completed", ()),
            spiff_extra={"wait": 1, "join": 1, "end": 1},
            note="the split's first branch throws before its later branch reaches the catch, "
            "in one step: Flowdesk delivers to the subscriptions that exist at the throw, so "
            "the catch waits for the next signal; Spiff delivers it. BPMN 2.0.2 leaves the "
            "order of a split's branches open (files/signal-parallel-same-step.bpmn has the "
            "catch first)",
        ),
        "files/signal-boundary.bpmn": Scenario(
            answers={"decide": {}},
            answer_all=False,
            expect=("completed", ()),
            note="the signal thrown after `decide` interrupts the open task `work`",
        ),
        "files/terminate-subprocess.bpmn": Scenario(
            expect=("completed", ()), note="the open task inside is cancelled"
        ),
        "files/terminate-top.bpmn": Scenario(
            expect=("completed", ()), note="terminate at the top completes the instance"
        ),
        "files/multi-instance-parallel.bpmn": Scenario(
            answers={"approve": [{"done": n} for n in (1, 2, 3)]},
            bind={"approve": {"multiInstance": {"completion": "$loop.completed >= 2"}}},
            expect=("completed", ()),
            note="Spiff has no completion counter: each answer carries its count as `done`, "
            "which Flowdesk keeps in $nodes, not in the $vars.done the importer reads",
        ),
        "files/multi-instance-sequential.bpmn": Scenario(
            input={"reviewers": ["ann", "bob", "cid"]},
            answers={"review": [{"done": n} for n in (1, 2, 3)]},
            bind={
                "review": {
                    "multiInstance": {
                        "collection": "$input.reviewers",
                        "completion": "$loop.completed >= 2",
                    }
                }
            },
            expect=("completed", ()),
            note="the start input is $input in Flowdesk, not the $vars the importer reads",
        ),
        "files/escalation.bpmn": Scenario(
            expect=("completed", ()), note="a non-interrupting escalation boundary"
        ),
        "files/flat-parallel-loop.bpmn": [
            Scenario(
                answers={"decide": [{"more": True}, {"more": True}, {"more": False}]},
                conditions={"f9": Cond("$nodes.decide.more == true")},
                timers_first=first,
                expect=("completed", ()),
                note="three rounds through a split and join, the timer first or last",
            )
            for first in (False, True)
        ],
        "files/call-activity.bpmn": [
            Scenario(
                called=("files/call-activity-called.bpmn",),
                results={"lookup": {"status": status}},
                conditions={"c4": Cond("$nodes.lookup.status == 'missing'")},
                expect=("completed", ()),
                note=note,
            )
            for status, note in (
                ("found", "the called process completes and the caller goes on"),
                ("missing", "the called process's error end goes to the call's error boundary"),
            )
        ]
        + [
            Scenario(
                called=("files/call-activity-called.bpmn",),
                results={"lookup": {"status": "found"}},
                conditions={"c4": Cond("$nodes.lookup.status == 'missing'")},
                answer_all=False,
                expect=("waiting", ("confirm",)),
                note="the caller waits while a task of the called process is open",
            )
        ],
        "files/call-chain.bpmn": [
            Scenario(
                called=("files/call-activity-called.bpmn", "files/call-chain-middle.bpmn"),
                results={"lookup": {"status": status}},
                conditions={"c4": Cond("$nodes.lookup.status == 'missing'")},
                expect=("completed", ()),
                note=note,
            )
            for status, note in (
                ("found", "both calls complete"),
                ("missing", "the bottom's error passes the middle and reaches the top's boundary"),
            )
        ],
        "files/call-chain-middle.bpmn": Scenario(
            called=("files/call-activity-called.bpmn",),
            results={"lookup": {"status": "missing"}},
            conditions={"c4": Cond("$nodes.lookup.status == 'missing'")},
            expect=("failed", ("inner_call",)),
            spiff_expect=("completed", ()),
            spiff_extra={"middle_task": 1, "middle_end": 1},
            note="nothing catches the called process's error: an incident at the call "
            "(BPMN 2.0.2 §10.4.3 leaves it unspecified); Spiff drops the error and goes on",
        ),
        "files/call-activity-called.bpmn": [
            Scenario(
                results={"lookup": {"status": "found"}},
                conditions={"c4": Cond("$nodes.lookup.status == 'missing'")},
                expect=("completed", ()),
            ),
            Scenario(
                results={"lookup": {"status": "missing"}},
                conditions={"c4": Cond("$nodes.lookup.status == 'missing'")},
                expect=("failed", ("missing",)),
                spiff_expect=("completed", ()),
                note="nothing catches the error: BPMN 2.0.2 leaves the outcome unspecified "
                "(§10.4.3, error end event); Flowdesk raises an incident, as Camunda 8 does "
                "(docs/process-format.md); Spiff completes the instance",
            ),
        ],
        "files/multi-instance-subprocess-boundary.bpmn": [
            Scenario(expect=("completed", ()), note="all three sign in time"),
            Scenario(
                timers_first=True,
                expect=("completed", ()),
                spiff_error="was not found",
                completed={
                    "start": 1,
                    "signing_start": 3,
                    "prepare": 3,
                    "deadline": 1,
                    "escalate": 1,
                    "end_late": 1,
                },
                note="the deadline cancels every open instance; the escalation follows (Spiff "
                "3.2 fails with TaskNotFoundException when an interrupting boundary event "
                "cancels a running multi-instance sub-process)",
            ),
            Scenario(
                answers={"sign": [{}]},
                timer_limit=0,
                expect=("waiting", ("sign", "sign")),
                note="one signature of three: the body waits for the other two",
            ),
        ],
        "files/call-activity-multi.bpmn": [
            Scenario(
                called=("files/call-activity-called.bpmn",),
                results={"lookup": {"status": "found"}},
                conditions={"c4": Cond("$nodes.lookup.status == 'missing'")},
                expect=("completed", ()),
            ),
            Scenario(
                called=("files/call-activity-called.bpmn",),
                results={"lookup": {"status": "found"}},
                conditions={"c4": Cond("$nodes.lookup.status == 'missing'")},
                answers={"confirm": [{}]},
                expect=("waiting", ("confirm",)),
                note="one called instance done, the other waits for its confirmation",
            ),
        ],
        "files/event-subprocess-message.bpmn": [
            Scenario(
                answers={"work": []},
                messages=(("Status", {}), ("Status", {})),
                expect=("waiting", ("work",)),
                note="two status requests, each answered while the work stays open",
            ),
            Scenario(
                messages=(("Status", {}),),
                expect=("completed", ()),
                note="the work is done first: nobody listens for the message any more",
            ),
        ],
        "files/multi-instance-error.bpmn": [
            Scenario(
                answers={"check": [{"ok": True}, {"ok": ok}, {"ok": True}]},
                conditions={"c4": Cond("$nodes.check.ok == false")},
                expect=("completed", ()),
                spiff_error=error,
                completed=completed,
                note=note,
            )
            for ok, error, completed, note in (
                (True, None, {}, "three checks pass"),
                (
                    False,
                    "was not found",
                    {
                        "start": 1,
                        "checks": 1,
                        "check_start": 2,
                        "check": 2,
                        "passed": 2,
                        "check_end": 1,
                        "bad": 1,
                        "on_bad": 1,
                        "repair": 1,
                        "end_repaired": 1,
                    },
                    "the second check fails: the third never starts, the repair follows "
                    "(Spiff 3.2 fails with TaskNotFoundException when the error boundary "
                    "cancels the multi-instance sub-process)",
                ),
            )
        ],
        "files/call-activity-escalation.bpmn": [
            Scenario(
                called=("files/call-activity-escalation-called.bpmn",),
                expect=("completed", ()),
            ),
            Scenario(
                called=("files/call-activity-escalation-called.bpmn",),
                answers={"finish": []},
                expect=("waiting", ("finish",)),
                note="the notification is out while the called process waits",
            ),
        ],
        "files/call-activity-escalation-called.bpmn": Scenario(
            expect=("completed", ()), note="an escalation nobody catches does not stop it"
        ),
        "files/terminate-multi-instance.bpmn": [
            Scenario(expect=("completed", ())),
            Scenario(
                answer_all=False,
                expect=("waiting", ("after",)),
                note="both instances end at their terminate ends; the body goes on",
            ),
        ],
        "files/event-subprocess-timer-nested.bpmn": [
            Scenario(
                timers_first=True,
                expect=("completed", ()),
                note="two reminders while the case runs, then the archive",
            ),
            Scenario(
                answers={"work": {}, "archive": []},
                expect=("waiting", ("archive",)),
                spiff_extra={"tick": 2, "remind": 2, "reminded": 2},
                note="the work is done before the first tick: the case completes at once and "
                "its event sub-process stops listening (BPMN 2.0.2 §10.2.5: it runs only while "
                "its parent is active); Spiff keeps the case open until both ticks fired",
            ),
        ],
        "files/multi-instance-boundary-cycle.bpmn": [
            Scenario(
                timers_first=True,
                expect=("completed", ()),
                note="two ticks, one reminder each, then both votes",
            ),
            Scenario(expect=("completed", ()), note="both vote before the first tick"),
        ],
        "files/escalation-end-interrupting.bpmn": [
            Scenario(
                answers={"long": []},
                expect=("completed", ()),
                note="the escalation end cancels the long work; the boundary's flow follows",
            ),
            Scenario(
                answers={"inspect": []},
                expect=("waiting", ("inspect",)),
                note="the long work is done, the inspection still open",
            ),
        ],
        "files/subprocess-loop-boundary.bpmn": [
            Scenario(
                answers={"try": [{"retry": True}, {"retry": False}]},
                conditions={"f5": Cond("$nodes.try.retry == true")},
                expect=("completed", ()),
                note="two entries, each done in time",
            ),
            Scenario(
                answers={"try": [{"retry": False}]},
                conditions={"f5": Cond("$nodes.try.retry == true")},
                timers_first=True,
                timer_limit=2,
                expect=("completed", ()),
                note="the timer ends the first two entries; the third is done",
            ),
        ],
        "files/multi-instance-empty.bpmn": [
            Scenario(
                input={"approvers": approvers},
                bind={"approve": {"multiInstance": {"collection": "$input.approvers"}}},
                expect=("completed", ()),
                note=note,
            )
            for approvers, note in (([], "no approver: no instance"), (["ann"], "one approver"))
        ],
        "files/event-subprocess-timer.bpmn": [
            Scenario(timers_first=True, expect=("completed", ()), note="two reminders, then done"),
            Scenario(
                expect=("completed", ()),
                spiff_extra={"tick": 2, "remind": 2, "reminded": 2},
                note="done before the first reminder: the instance completes at once (BPMN "
                "2.0.2 §13.1: no token is left and no activity is active; an event sub-process "
                "waiting for its trigger is neither); Spiff keeps it open until the cycle has "
                "fired its two ticks",
            ),
            Scenario(
                timers_first=True,
                answer_all=False,
                expect=("waiting", ("review",)),
                note="reminders do not end the review",
            ),
        ],
        "files/flat-exclusive-merge-then-join.bpmn": Scenario(
            expect=("waiting", ("join",)),
            spiff_expect=("completed", ()),
            note="the second token through the merge waits at the join for good (BPMN 2.0.2 "
            "§13.4.1: a parallel join consumes one token per incoming flow; the instance is not "
            "complete while a token is left); Spiff drops the left-over token and completes",
        ),
    }
)


# --- inclusive and event-based gateways --------------------------------------------------


def _inclusive(names: str, values: tuple[bool, ...], **extra: Any) -> Scenario:
    """Start input `names[i]` = `values[i]`; each flow `to_<name>` reads `$input.<name>` in
    Flowdesk and the bare name in Python (the file's text)."""
    given = dict(zip(names, values, strict=True))
    conditions = {f"to_{name}": Cond(f"$input.{name} == true") for name in names}
    conditions.update(extra.pop("conditions", {}))
    return Scenario(input=given, conditions=conditions, **extra)


_TRUE = Cond("true")
_LONG_INCLUSIVE = "spiffworkflow/Parallel-Join-Long-Inclusive.bpmn20.xml"
_THREAD_CHOICES = {
    "sid-69DF31CE-D587-4BA8-8BE6-72786108D8DF": (
        "sid-C609F3E0-2D09-469C-8750-3E3BA8C926BE",
        "sid-C06DF3AB-4CE5-4123-8033-8AACDCDF4416",
    ),
    "sid-23391B60-C6A7-4C9E-9F95-43EA84ECFB74": (
        "sid-D7D86B12-A88C-4072-9852-6DD62643556A",
        "sid-16EB4D98-7F77-4046-8CDD-E07C796542FE",
    ),
}


def _long_inclusive(first: str, second: str) -> Scenario:
    """Each thread's choice: Yes runs twelve tasks to the inclusive join, No ends the thread."""
    answers: dict[str, dict | list[dict]] = {}
    conditions = {}
    for (task, (yes, no)), choice in zip(_THREAD_CHOICES.items(), (first, second), strict=True):
        answers[task] = {"choice": choice}
        conditions[yes] = _answer_is(task, "choice", "Yes")
        conditions[no] = _answer_is(task, "choice", "No")
    return Scenario(
        answers=answers,
        conditions=conditions,
        expect=("completed", ()),
        note="an inclusive join after a parallel split whose threads may end before it: the "
        "join waits only for threads that can still reach it",
    )


# Both sides stub the scripts (`v += 1` ...): v stays what the user task set.
_SPIFF_INCLUSIVE = {
    "u_positive": Cond(out("set_data", "u > 0")),
    "w_positive": Cond(out("set_data", "w > 0")),
    "check_v": Cond(out("set_data", "v == 0")),
}

SCENARIOS.update(
    {
        "files/inclusive-split-join.bpmn": [
            _inclusive("abc", vector, expect=("completed", ()))
            for vector in itertools.product((False, True), repeat=3)
        ]
        + [
            _inclusive(
                "abc",
                (True, True, False),
                answer_all=False,
                expect=("waiting", ("b", "join")),
                note="the join waits for the slow branch that was taken",
            )
        ],
        "files/inclusive-nested.bpmn": [
            _inclusive("pqrs", vector, expect=expect, conditions={"to_x": _TRUE, "to_y": _TRUE})
            for vector, expect in (
                ((True, True, True, True), ("completed", ())),
                ((True, False, False, True), ("completed", ())),
                ((True, True, False, False), ("completed", ())),
                ((False, True, True, True), ("completed", ())),
                ((False, False, True, True), ("failed", ("outer_split",))),
            )
        ],
        "files/inclusive-loop.bpmn": Scenario(
            answers={
                "ask": [
                    {"want_a": True, "want_b": True, "more": True},
                    {"want_a": False, "want_b": True, "more": True},
                    {"want_a": True, "want_b": False, "more": False},
                ]
            },
            conditions={
                "to_a": Cond(f"{out('ask', 'want_a')} == true", "want_a"),
                "to_b": Cond(f"{out('ask', 'want_b')} == true", "want_b"),
                "back": Cond(f"{out('ask', 'more')} == true", "more"),
            },
            expect=("completed", ()),
            note="three rounds through the split and join, each with its own branches",
        ),
        "files/event-gateway.bpmn": [
            Scenario(
                messages=(("Paid", {"amount": 5}), ("Ok", {})),
                timer_limit=0,
                expect=("completed", ()),
                note="the message wins; in the sub-process the first of two messages wins",
            ),
            Scenario(
                messages=(("Paid", {}), ("No", {})),
                timer_limit=0,
                expect=("completed", ()),
            ),
            Scenario(
                messages=(("Ok", {}),),
                expect=("completed", ()),
                note="the timer wins; the message is never listened for again",
            ),
        ],
        "spiffworkflow/event-gateway.bpmn": [
            Scenario(messages=((name, {}),), timer_limit=0, expect=("completed", ()))
            for name in ("message_1", "message_2")
        ]
        + [Scenario(expect=("completed", ()), note="the timer wins")],
        "spiffworkflow/inclusive_gateway.bpmn": [
            Scenario(
                answers={"set_data": {"u": u, "v": v, "w": w}},
                conditions=_SPIFF_INCLUSIVE,
                expect=expect,
                note="u > 0 and w > 0 each take a branch, the default only when neither does; "
                "the join's one flow has a condition, and with it false nothing goes on",
            )
            for u, v, w, expect in (
                (1, 0, 1, ("completed", ())),
                (1, 0, 0, ("completed", ())),
                (0, 0, 1, ("completed", ())),
                (0, 0, 0, ("completed", ())),
                (1, 1, 1, ("failed", ("second",))),
            )
        ],
        "camunda-bpm-platform/InclusiveGatewayTest.testDefaultSequenceFlow.bpmn20.xml": [
            Scenario(
                input={"input": value},
                conditions={
                    "flow2": Cond("$input.input == 1", "input == 1"),
                    "flow4": Cond("$input.input == 3 or $input.input == 1", "input in (1, 3)"),
                },
                expect=("completed", ()),
            )
            for value in (1, 2, 3)
        ],
        _LONG_INCLUSIVE: [
            _long_inclusive(first, second)
            for first, second in (("Yes", "Yes"), ("Yes", "No"), ("No", "Yes"), ("No", "No"))
        ],
    }
)


# --- script, send, receive and manual tasks, link and message throw events ------------------

_TOTAL = {
    "calc": Script("total = $input.price * $input.qty", "total = price * qty"),
    "judge": Script("big = $vars.total > 100", "big = total > 100"),
}
_COUNT = {
    "init": Script("n = 0", "n = 0"),
    "count": Script("n = $vars.n + 1", "n = n + 1"),
}

SCENARIOS.update(
    {
        "files/script-task.bpmn": [
            Scenario(
                input=data,
                scripts=_TOTAL,
                conditions={"large": Cond("$vars.big == true")},
                expect=expect,
                note=note,
            )
            for data, expect, note in (
                ({"price": 30, "qty": 5}, ("completed", ()), "a big order is approved"),
                ({"price": 1, "qty": 5}, ("completed", ()), "a small one is not"),
                (
                    {"price": 1, "qty": None},
                    ("failed", ("calc",)),
                    "a script that fails (a number times nothing) fails its task",
                ),
            )
        ],
        "files/implicit-end.bpmn": Scenario(
            expect=("completed", ()),
            note="tasks without outgoing flows end their paths; the instance still completes",
        ),
        "files/manual-milestone.bpmn": Scenario(
            expect=("completed", ()),
            note="Flowdesk passes manual tasks through; the harness completes Spiff's ready ones",
        ),
        "files/link-events.bpmn": Scenario(
            scripts=_COUNT,
            conditions={"more": Cond("$vars.n < 3")},
            expect=("completed", ()),
            spiff_missing={
                **{"again_throw": 1, "again_catch": 2, "count": 2, "gw": 2},
                **{"next_throw": 1, "next_catch": 1, "sub": 1, "end": 1},
                **{"s_start": 1, "s_throw": 1, "s_catch": 1, "s_task": 1, "s_end": 1},
            },
            note="three rounds through a link loop, then a link pair inside a sub-process; "
            "SpiffWorkflow 3.2 does not know link events (it reads a link throw as a plain "
            "throw event without outgoing flow, so the token ends there), where BPMN 2.0.2 "
            "§10.4.6 goes on at the link catch of the same name",
        ),
        "files/send-receive.bpmn": [
            Scenario(
                messages=(("paid", {"amount": 5}),),
                expect=("completed", ()),
                note="the payment comes: a receipt is sent and the end event tells the shop",
            ),
            Scenario(
                timers_first=True,
                messages=(("paid", {"amount": 5}),),
                expect=("completed", ()),
                note="the timer fires first: the wait is withdrawn, the message finds nobody",
            ),
            Scenario(
                expect=("waiting", ("wait",)),
                timer_limit=0,
                note="no message and no timer: the receive task waits",
            ),
        ],
    }
)

# --- business rule tasks: the decisions of files/*.dmn, published (Flowdesk) or read (Spiff) ---

_DISCOUNT = ("files/decision-discount.dmn",)
_INVOICE = ("files/decision-invoice.dmn",)
_CLARIFIED = "$vars.review.review.clarified"
#: The nodes of the vacation request (C.8.1) by the first part of their ids.
_VACATION_IDS = {
    full.split("-")[0]: full
    for full in (
        "_b1625a52-aaf0-4694-86cb-7af891212ac6",
        "_2b960d84-feb1-46a9-a1a1-c300dd996b99",
        "_1a818a94-ba6f-413b-a7e8-6f8fd2a11e32",
        "_42367c5f-d084-44ee-90c7-960d1ab02a3b",
        "_93ec9873-edf1-4549-b052-961994ec8234",
        "_4b72053b-8ebb-4ae6-99c6-7c93cf1c1d1b",
        "_6677ef80-82df-4951-919d-1f36123b681b",
        "_9ed61a6a-7cc1-4ed1-86d8-03482b0983c9",
        "_1688f604-5edf-4187-ad9e-18f74bfede53",
        "_79523269-7444-4b01-90e9-e23957a9d020",
        "_64bb8b55-d348-41d6-9ea8-f333b1d8cb69",
        "_a97c1a48-faba-447b-bfa6-7aa81a6fe0a0",
        "_5e16a4e0-0f23-482a-be47-d3edbc5741ba",
        "_1cd5fe29-b3ec-4f21-a1aa-57773f0729ca",
        "_02232e32-c3d2-473c-a15d-9c5dca00eadc",
        "_3ae826ca-5f38-43c4-be3a-35d1157aa27f",
    )
}


def _vacation_id(short: str) -> str:
    return _VACATION_IDS.get(short.split("-")[0], short)


_VACATION_FETCH = _vacation_id("_2b960d84")
_VACATION_MANAGER = _vacation_id("_79523269")
_VACATION_START = tuple(map(_vacation_id, ("_b1625a52", "_2b960d84", "_1a818a94", "_42367c5f")))

SCENARIOS.update(
    {
        "files/decision-gateway.bpmn": [
            Scenario(
                decisions=_DISCOUNT,
                input={"amount": amount},
                expect=("completed", ()),
                note=f"amount {amount}: the discount decision routes the gateway",
            )
            for amount in (20, 500, 5000)
        ],
        "files/decision-collect.bpmn": [
            Scenario(
                decisions=_INVOICE,
                input={"amount": amount, "invoiceCategory": category},
                expect=("completed", ()),
                note=f"{category} {amount}: a COLLECT decision fed by the classification it "
                "requires opens one review per approver group",
            )
            for amount, category in (
                (100, "Misc"),
                (500, "Misc"),
                (5000, "Misc"),
                (5000, "Software License Costs"),
            )
        ],
        # Refused for its business rule task until Flowdesk ran them; files/decision-invoice.dmn
        # provides the decision it names (with the classification it requires).
        "camunda-bpm-platform/invoice.v2.bpmn": [
            Scenario(
                decisions=_INVOICE,
                called=("camunda-bpm-platform/reviewInvoice.bpmn",),
                input={"amount": 500, "invoiceCategory": "Misc"},
                answers={
                    "approveInvoice": [{"approved": approved} for approved in rounds],
                    "reviewInvoice": {"clarified": clarified},
                },
                conditions={
                    "invoiceApproved": Cond(python="approved"),
                    "invoiceNotApproved": Cond(python="not approved"),
                    "reviewSuccessful": Cond(_CLARIFIED + " == true", "clarified"),
                    "reviewNotSuccessful": Cond(_CLARIFIED + " != true", "not clarified"),
                },
                # The review's answer comes back as the call's output (its camunda:out mapping
                # of all variables is not imported); the binding also reaches the called file's
                # task of the same id, whose answer the child saves under the same name.
                bind={"reviewInvoice": {"saveTo": "review"}},
                expect=("completed", ()),
                note="the approver groups come from the decision; approved at once, or "
                "reviewed first",
            )
            for rounds, clarified in (((True,), True), ((False, True), True), ((False,), False))
        ],
        # Refused for its business rule task until Flowdesk ran it (C.8.0 is the same process,
        # not executable): Zeebe's DMN worker names the decision (files/decision-vacation.dmn)
        # in its decisionRef header; its two outputs join the variables pool and the gateways
        # read Approval. Spiff cannot resolve the file's data input associations.
        "miwg-test-suite/reference/C.8.1.bpmn": [
            Scenario(
                decisions=("files/decision-vacation.dmn",),
                results={_VACATION_FETCH: {"days": days}},
                answers={_VACATION_MANAGER: {"Approval": answer}},
                conditions={
                    _vacation_id(flow): Cond(
                        f"$vars.Approval == '{wanted}'", f"Approval == '{wanted}'"
                    )
                    for flow, wanted in (
                        ("_325973e7-0bc8-4136-b6df-be1e681d8608", "Approved"),
                        ("_f2b0da63-d841-4457-ad85-7d86c8b5c1d2", "Approved"),
                        ("_0a1c4f20-509f-4aeb-baf9-acc762f4fdf9", "Manual Validation Required"),
                    )
                },
                flowdesk_only="Cannot resolve dataInputAssociation",
                expect=("completed", ()),
                completed=dict.fromkeys(_VACATION_START + tuple(map(_vacation_id, path)), 1),
                note=f"{days} days: approved or refused by the decision, or by a manager "
                f"({answer})",
            )
            for days, answer, path in (
                (3, "Approved", ("_93ec9873", "_4b72053b", "_6677ef80")),
                (20, "Refused", ("_9ed61a6a", "_1688f604")),
                (10, "Approved", ("_79523269", "_64bb8b55", "_a97c1a48", "_5e16a4e0", "_1cd5fe29")),
                (10, "No", ("_79523269", "_64bb8b55", "_02232e32", "_3ae826ca")),
            )
        ],
        # Refused for its business rule task until Flowdesk ran them: the Zeebe decision
        # risk_check (files/decision-risk.dmn) routes the risk gateway through its result.
        "miwg-test-suite/reference/C.9.0.bpmn": [
            Scenario(
                decisions=("files/decision-risk.dmn",),
                called=(
                    "miwg-test-suite/reference/C.9.1.bpmn",
                    "miwg-test-suite/reference/C.9.2.bpmn",
                ),
                results={"ServiceTask_GetCreditScore": {"creditScore": score}},
                conditions={
                    "SequenceFlow_Red": Cond("$vars.result == 'red'", "result == 'red'"),
                    "SequenceFlow_Yellow": Cond("$vars.result == 'yellow'", "result == 'yellow'"),
                },
                flowdesk_only="starts on errorEventDefinition",
                expect=("completed", ()),
                completed={
                    "StartEvent_ApplicationReceived": 1,
                    "ServiceTask_GetCreditScore": 1,
                    "BusinessRuleTask_CheckApplicationAutomatically": 1,
                    "ExclusiveGateway_Risk": 1,
                    **dict.fromkeys(path, 1),
                },
                note=f"credit score {score}: the decision's risk level routes the gateway; "
                "Spiff 3.2 reads the error-started event sub-process as a plain one",
            )
            for score, path in (
                (
                    800,
                    (
                        "ServiceTask_DeliverPolicy",
                        "SendTask_SendPolicy",
                        "EndEvent_ApplicationIssued",
                    ),
                ),
                (
                    300,
                    (
                        "ServiceTask_RejectPolicy",
                        "SendTask_SendRejection",
                        "EndEvent_ApplicationRejected",
                    ),
                ),
            )
        ],
    }
)

# --- compensation and transactions ------------------------------------------------------------
# SpiffWorkflow 3.2 runs transactions and cancel ends, but refuses compensation events when it
# parses a file ("Unsupported Catch Event"): those files check Flowdesk against the spec alone.
_NO_COMPENSATION = "Unsupported Catch Event"
_CHOICE_IS = {"p3": Cond("$vars.choice == 'cancel'")}
_SPIFF_TRANSACTION = "spiffworkflow/transaction.bpmn"
_TRANSACTION_SCRIPTS = {
    "Activity_Print_Data": Script("printed = true", "printed = True"),
    "Cancel_Action": Script("reason = 'Cancel'", "reason = 'Cancel'"),
    "Error_1_Action": Script("reason = 'Error 1'", "reason = 'Error 1'"),
    "Error_None_Action": Script("reason = 'Error None'", "reason = 'Error None'"),
}

SCENARIOS.update(
    {
        "files/transaction-cancel.bpmn": [
            Scenario(
                answers={"reserve": {"choice": choice}},
                conditions=_CHOICE_IS,
                expect=("completed", ()),
                note=note,
            )
            for choice, note in (
                ("cancel", "the cancel end leaves the transaction by its cancel boundary event"),
                ("pay", "the transaction completes and the flow goes on"),
            )
        ],
        _SPIFF_TRANSACTION: [
            Scenario(
                answers={
                    "Activity_Get_Data": {"value": value},
                    "Activity_Get_Quantity": {"quantity": quantity},
                },
                scripts=_TRANSACTION_SCRIPTS,
                # An empty text answer reaches Flowdesk's data as null, not "".
                conditions={"Flow_1j0zczv": Cond("not $vars.value")},
                bind={"Error_None": {"code": "NONE"}},
                expect=("completed", ()),
                spiff_extra=extra,
                note=note,
            )
            for value, quantity, extra, note in (
                ("", 1, {}, "empty data: the cancel end leaves by the cancel boundary event"),
                ("x", 5, {}, "the transaction completes and the data is printed"),
                (
                    "x",
                    -1,
                    {"Catch_Error_None": 1, "Error_None_Action": 1},
                    "error 1 leaves by its own boundary event; Spiff also triggers the "
                    "catch-all, which BPMN 2.0.2 §13.5.3 rules out (see files/error-boundary)",
                ),
                ("x", 0, {}, "an error without a code (bound to one) goes to the catch-all"),
            )
        ],
        "files/transaction-error.bpmn": [
            Scenario(
                answers={"charge": {"outcome": outcome}},
                conditions={
                    "p3": Cond("$vars.outcome == 'refused'"),
                    "p4": Cond("$vars.outcome == 'cancel'"),
                },
                expect=("completed", ()),
                note=note,
            )
            for outcome, note in (
                ("refused", "an error leaves the transaction by its error boundary event"),
                ("cancel", "a cancel end leaves by the cancel boundary event"),
                ("paid", "neither: the transaction completes"),
            )
        ],
        "files/compensation-order.bpmn": Scenario(
            expect=("completed", ()),
            flowdesk_only=_NO_COMPENSATION,
            completed={
                **{"start": 1, "book_flight": 1, "book_hotel": 1, "undo": 1, "end": 1},
                **{"cancel_hotel": 1, "cancel_flight": 1},
            },
            note="both handlers run (the hotel's first), then the throw goes on",
        ),
        "files/compensation-parallel.bpmn": Scenario(
            expect=("completed", ()),
            flowdesk_only=_NO_COMPENSATION,
            completed={
                **{"start": 1, "split": 1, "book_car": 1, "book_room": 1, "join": 1},
                **{"return_car": 1, "free_room": 1, "undo_all": 1},
            },
            note="a compensation end after a join undoes both branches, then the path ends",
        ),
        "files/compensation-data.bpmn": Scenario(
            scripts={
                "book": Script("price = 10", "price = 10"),
                "reprice": Script("price = 100", "price = 100"),
                "refund": Script("refunded = $vars.price", "refunded = price"),
            },
            conditions={"f5": Cond("$vars.refunded == 10")},
            expect=("completed", ()),
            flowdesk_only=_NO_COMPENSATION,
            completed={
                **{"start": 1, "book": 1, "reprice": 1, "undo": 1, "refund": 1},
                **{"check": 1, "end_as_booked": 1},
            },
            note="the handler reads the price as it was when the booking completed",
        ),
        "files/compensation-multi-instance.bpmn": Scenario(
            expect=("completed", ()),
            flowdesk_only=_NO_COMPENSATION,
            completed={"start": 1, "ship": 3, "undo": 1, "recall": 3, "end": 1},
            note="each of the three completed instances is undone",
        ),
        "files/transaction-compensation.bpmn": [
            Scenario(
                answers={"reserve": {"choice": "cancel"}},
                conditions=_CHOICE_IS,
                expect=("completed", ()),
                flowdesk_only=_NO_COMPENSATION,
                completed={
                    **{"start": 1, "payment_start": 1, "reserve": 1, "decide": 1},
                    **{"cancelled": 1, "release": 1, "on_cancel": 1, "undo_again": 1},
                    "end_cancelled": 1,
                },
                note="the cancel end releases the reservation (the payment never ran), leaves "
                "by the cancel boundary; the later throw finds nothing completed to undo",
            ),
            Scenario(
                answers={"reserve": {"choice": "pay"}},
                conditions=_CHOICE_IS,
                expect=("completed", ()),
                flowdesk_only=_NO_COMPENSATION,
                completed={
                    **{"start": 1, "payment_start": 1, "reserve": 1, "decide": 1, "pay": 1},
                    **{"payment_end": 1, "payment": 1, "end_paid": 1},
                },
                note="the transaction completes: nothing is compensated",
            ),
        ],
    }
)


# --- conditional events and standard loops ---------------------------------------------------

_LOOP_COUNT = {"count": Script("n = $vars.n + 1", "n = n + 1")}


def _loops() -> dict[str, Scenario | list[Scenario]]:
    """Standard loops tested after and before each run, and bounded by a maximum."""
    return {
        "files/loop-test-after.bpmn": [
            Scenario(
                input={"n": n},
                scripts=_LOOP_COUNT,
                expect=("completed", ()),
                note=note,
            )
            for n, note in ((0, "three runs until n is 3"), (5, "tested after: one run"))
        ],
        "files/loop-test-before.bpmn": [
            Scenario(
                input={"n": n},
                scripts=_LOOP_COUNT,
                expect=("completed", ()),
                note=note,
            )
            for n, note in ((1, "two runs until n is 3"), (5, "tested before: no run"))
        ],
        "files/loop-maximum.bpmn": [
            Scenario(
                answers={"ask": [{"again": again} for again in answers]},
                expect=("completed", ()),
                note=note,
            )
            for answers, note in (
                ((True, False), "asked twice: the second answer ends the loop"),
                ((True, True, True, True), "the maximum stops it after three runs"),
            )
        ],
    }


def _conditional_events() -> dict[str, Scenario | list[Scenario]]:
    """A conditional catch fed by a task's answer; conditional boundaries true as the task
    starts, or not."""
    boundary = {
        name: [
            Scenario(input={"urgent": True}, answer_all=False, expect=(state, waiting), note=note),
            Scenario(input={"urgent": False}, expect=("completed", ()), note="the task is worked"),
        ]
        for name, state, waiting, note in (
            (
                "files/conditional-boundary-interrupting.bpmn",
                "completed",
                (),
                "urgent as the task starts: the task is cancelled, the urgent path ends",
            ),
            (
                "files/conditional-boundary-non-interrupting.bpmn",
                "waiting",
                ("work",),
                "urgent as the task starts: the urgent path runs once, the task stays open",
            ),
        )
    }
    return {
        "files/conditional-event-subprocess.bpmn": [
            Scenario(
                input={"urgent": True},
                expect=("completed", ()),
                spiff_missing={"esp_start": 1, "notify": 1, "esp_end": 1},
                note="urgent as the process starts: the urgent path runs beside the work; "
                "SpiffWorkflow 3.2 never starts a conditional event sub-process, where BPMN "
                "2.0.2 §10.2.5 and §10.5.2 start it when its condition holds",
            ),
            Scenario(input={"urgent": False}, expect=("completed", ()), note="only the work"),
        ],
        "files/conditional-catch.bpmn": [
            Scenario(answers={"ask": {"ok": True}}, expect=("completed", ()), note="approved"),
            Scenario(
                answers={"ask": {"ok": False}},
                expect=("waiting", ("approved",)),
                note="not approved: the token waits at the catch",
            ),
        ],
        **boundary,
    }


SCENARIOS.update({**_loops(), **_conditional_events()})


# --- ad-hoc part: cycle timers on intermediate catches -----------------------------------------

SCENARIOS.update(
    {
        "files/timer-cycle-catch.bpmn": [
            Scenario(
                expect=("completed", ()),
                spiff_extra={"tick": 2, "review": 2, "end": 2},
                note="the catch fires once, at the cycle's first occurrence, then the review; "
                "SpiffWorkflow 3.2 fires it at each of the cycle's three ticks and sends a token "
                "on each time, where BPMN 2.0.2 §13.5.1 completes the event once and moves its "
                "one token on",
            ),
            Scenario(
                timer_limit=0,
                expect=("waiting", ("tick",)),
                note="before the first occurrence the token waits at the catch",
            ),
        ],
    }
)
