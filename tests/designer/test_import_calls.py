"""After an "All" import the caller's problems follow the called process: once it is published,
the process list, the designer and the report no longer say it is not published."""

from __future__ import annotations

import io

from sqlalchemy import select

from tests.helpers.bpmn import CALLS
from tests.helpers.designer import carried, finance, post_form, publish
from webapp.models import Process


def test_publishing_the_called_process_clears_the_caller_s_problem(designer, db_session):
    first = post_form(designer, "/designer/import", file=(io.BytesIO(CALLS), "calls.bpmn"),
                 partition=finance(db_session))  # fmt: skip
    done = post_form(designer, "/designer/import", carried=carried(first.get_data(as_text=True)),
                pool="*", partition=finance(db_session))  # fmt: skip
    assert done.status_code == 302
    made = {p.key: p.id for p in db_session.scalars(select(Process)).all()}
    stale = "calls process &#39;callee&#39;, which is not published"
    assert stale in designer.get(f"/designer/{made['caller']}/").get_data(as_text=True)
    assert "1 error<" in designer.get("/designer/").get_data(as_text=True)
    assert publish(designer, made["callee"], revision=1).status_code == 302
    for path in (f"/designer/{made['caller']}/", f"/designer/{made['caller']}/import-report"):
        assert stale not in designer.get(path).get_data(as_text=True), path
    assert "1 error<" not in designer.get("/designer/").get_data(as_text=True)
    db_session.expire_all()
    caller = db_session.get(Process, made["caller"])
    assert caller.draft_problems == []
