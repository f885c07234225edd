"""The overview and the instance list refresh by themselves: a poll every 5 seconds answers 204
until something shown changed, then only the parts that changed, for the same filters and page."""

from __future__ import annotations

import re

from tests.helpers.documents import failing_doc, waiting_doc
from tests.helpers.instances import start, start_many
from tests.helpers.pages import listed_ids
from tests.helpers.processes import publish_document

POLLER = re.compile(r'<div id="(\w+-poll)" hidden data-live="(\w+)"(?: hx-get="([^"]+)")?')


def _poller(html: str) -> tuple[str, str | None]:
    _, mode, url = POLLER.search(html).groups()
    return mode, url and url.replace("&amp;", "&")


REGION = re.compile(r'<(?:div|table|nav|figure|span)[^>]* id="((?:instance|overview)-[\w-]+)"')


def _regions(fragment: str) -> set[str]:
    return set(REGION.findall(fragment))


def test_the_list_polls_with_its_filters_and_ticks_and_sends_only_changed_rows(operator, engine):
    version = publish_document(waiting_doc(), key="wait")
    other = publish_document(waiting_doc(), key="other")
    first = start_many(engine, version, 2)
    page = operator.get(f"/operations/instances?process=wait&ids={first[0]}").get_data(as_text=True)
    mode, url = _poller(page)
    assert mode == "steady" and 'hx-trigger="every 5s"' in page
    assert url.startswith("/operations/instances/live?") and "process=wait" in url
    assert f"ids={first[0]}" in url, "the poll renders the same ticks"
    assert operator.get(url).status_code == 204

    start(engine, other)
    assert operator.get(url).status_code == 204, "another process is not in this list"
    newest = start(engine, version)
    fragment = operator.get(url).get_data(as_text=True)
    assert _regions(fragment) == {"instance-table"}, "the pager did not change"
    assert listed_ids(fragment) == [newest, *reversed(first)]
    assert re.search(rf'value="{first[0]}"[^>]* hx-preserve checked>', fragment)
    assert "<form" not in fragment and 'id="f-process"' not in fragment
    new_mode, new_url = _poller(fragment)
    assert new_mode == "steady" and operator.get(new_url).status_code == 204


def test_an_older_page_polls_itself_and_a_refused_filter_does_not_poll(operator, engine):
    version = publish_document(waiting_doc(), key="wait")
    start_many(engine, version, 30)
    page = operator.get("/operations/instances").get_data(as_text=True)
    older = re.search(r'href="([^"]+)" rel="next"', page).group(1).replace("&amp;", "&")
    second = operator.get(older).get_data(as_text=True)
    url = _poller(second)[1]
    assert "after=" in url and operator.get(url).status_code == 204
    start(engine, version)
    assert operator.get(url).status_code == 204, "a new instance does not shift an older page"

    refused = operator.get("/operations/instances?data=$vars.a+>").get_data(as_text=True)
    assert _poller(refused) == ("off", None)


def test_the_overview_polls_and_sends_only_the_parts_that_changed(operator, engine):
    start(engine, publish_document(waiting_doc(), key="wait"))
    page = operator.get("/operations/").get_data(as_text=True)
    mode, url = _poller(page)
    assert mode == "steady" and url.startswith("/operations/live?")
    assert operator.get(url).status_code == 204

    from tests.helpers.workers import drain

    start(engine, publish_document(failing_doc(), key="charge"))
    drain(engine)
    fragment = operator.get(url).get_data(as_text=True)
    changed = _regions(fragment)
    assert {"overview-status", "overview-incidents", "overview-processes"} <= changed
    assert "overview-bulk" not in changed and "overview-overdue" not in changed
    assert "card declined" in fragment
    assert operator.get(_poller(fragment)[1]).status_code == 204
