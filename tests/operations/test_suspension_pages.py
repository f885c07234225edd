"""Suspend and resume on the pages: a refused form comes back with its message and nothing
changes, the instance list filters by suspended, and who may see which buttons."""

from __future__ import annotations

from tests.helpers.app import csrf_token, failed_page, login
from tests.helpers.documents import waiting_doc
from tests.helpers.instances import history, load, start
from tests.helpers.processes import publish_document


def _post(client, path: str, **data):
    return client.post(path, data={"csrf_token": csrf_token(client, "/operations/"), **data})


def test_a_suspend_without_a_reason_comes_back_with_the_message(operator, engine):
    instance_id = start(engine, publish_document(waiting_doc(), key="wait"))
    page_path = f"/operations/instances/{instance_id}"
    refused = _post(operator, f"{page_path}/suspend", reason="  ")
    assert "Say why it is suspended." in failed_page(operator, refused, page_path)
    assert load(engine, instance_id).suspended_at is None
    done = _post(operator, f"{page_path}/suspend", reason="audit")
    assert done.status_code == 303
    page = operator.get(page_path).get_data(as_text=True)
    assert "Resume instance" in page and "Reason: audit" in page
    twice = _post(operator, f"{page_path}/suspend", reason="again")
    assert "is suspended already" in failed_page(operator, twice, page_path)
    assert [kind for kind, _ in history(engine, instance_id)].count("suspended") == 1


def test_a_version_suspend_without_a_reason_comes_back_with_the_message(operator, engine):
    publish_document(waiting_doc(), key="wait")
    path = "/operations/processes/wait/versions"
    refused = _post(operator, f"{path}/1/suspend", reason="")
    assert "Say why it is suspended." in failed_page(operator, refused, path)
    assert _post(operator, f"{path}/1/suspend", reason="bad rate").status_code == 303
    page = operator.get(path).get_data(as_text=True)
    assert "bad rate" in page and "Resume v1" in page
    assert operator.get("/operations/processes/nope/versions").status_code == 404


def test_the_list_filters_by_suspended(operator, engine):
    version = publish_document(waiting_doc(), key="wait")
    quiet, paused = start(engine, version), start(engine, version)
    _post(operator, f"/operations/instances/{paused}/suspend", reason="audit")
    only = operator.get("/operations/instances?suspended=1").get_data(as_text=True)
    assert f'/operations/instances/{paused}"' in only
    assert f'/operations/instances/{quiet}"' not in only
    others = operator.get("/operations/instances?suspended=0").get_data(as_text=True)
    assert f'/operations/instances/{quiet}"' in others
    assert f'/operations/instances/{paused}"' not in others
    wrong = operator.get("/operations/instances?suspended=maybe")
    assert wrong.status_code == 422
    assert "Use 1 for suspended instances, 0 for the others." in wrong.get_data(as_text=True)


def test_without_instances_modify_no_buttons_and_posts_are_refused(user_with, engine):
    instance_id = start(engine, publish_document(waiting_doc(), key="wait"))
    reader = user_with(["instances.read", "instances.manage"])
    page = reader.get(f"/operations/instances/{instance_id}").get_data(as_text=True)
    assert "Suspend instance" not in page
    refused = _post(reader, f"/operations/instances/{instance_id}/suspend", reason="x")
    assert refused.status_code == 403
    assert reader.get("/operations/processes/wait/versions").status_code == 403
    assert load(engine, instance_id).suspended_at is None


def test_the_designer_versions_page_shows_a_suspended_version_and_links_operators(login_as, app):
    with app.app_context():
        process_id = publish_document(waiting_doc(), key="wait").process_id
    admin = login_as("admin")
    path = "/operations/processes/wait/versions/1/suspend"
    assert _post(admin, path, reason="x").status_code == 303
    page = admin.get(f"/designer/{process_id}/versions").get_data(as_text=True)
    assert '<span class="tag tag-warn">suspended</span>' in page
    assert "/operations/processes/wait/versions" in page
    designer = app.test_client()
    login(designer, "designer")
    page = designer.get(f"/designer/{process_id}/versions").get_data(as_text=True)
    assert 'tag-warn">suspended' in page
    assert "Suspend or resume versions" not in page
