"""Who may do what in operations: sign-in, instances.read to look, instances.manage to change,
and partitions: another partition's instance is 404 for reading and for every action."""

from __future__ import annotations

import pytest

from tests.helpers.app import csrf_token, failed_page, login, make_user
from tests.helpers.instances import start_failed_gate
from tests.helpers.processes import published

# (path, whether it shows one finance object: then 404 for a reader of another partition)
READS = [
    ("/operations/", False),
    ("/operations/instances", False),
    ("/operations/heat", False),
    ("/operations/health", False),
    ("/operations/retention", False),
    ("/operations/instances/{id}", True),
    ("/operations/instances/{id}/live", True),
    ("/operations/heat/invoice", True),
]
ACTIONS = [
    ("/operations/instances/{id}/cancel", {"reason": "x"}),
    ("/operations/instances/{id}/retry", {}),
    ("/operations/instances/{id}/variables", {"name": "check", "value": "1"}),
    ("/operations/retention/invoice", {"days": "3"}),
    ("/operations/bulk", {"action": "cancel", "reason": "x", "ids": "{id}", "confirm": "yes"}),
]


@pytest.fixture
def people(app, demo, db_session):

    made = {
        "nobody": ([], ["finance"]),
        "reader": (["instances.read"], ["finance"]),
        "manager": (["instances.read", "instances.manage"], ["finance"]),
        "hr_manager": (["instances.read", "instances.manage"], ["hr"]),
    }
    for name, (permissions, partitions) in made.items():
        make_user(name, permissions or ["tasks.work"], partitions)

    def client_for(name: str):
        client = app.test_client()
        assert login(client, name, "password-123").status_code == 302
        return client

    return client_for


@pytest.fixture
def finance_instance(db_session, people):
    """Set up on the second app (db_session): several users sign in within one test, and requests
    inside an app context of the app under test would share Flask-Login's cached user."""
    published("invoice", "finance")
    return start_failed_gate(db_session, partition="finance")


def test_signed_out_visitors_are_sent_to_sign_in(client, finance_instance):
    for path, _scoped in READS:
        response = client.get(path.format(id=finance_instance))
        assert response.status_code == 302 and "/login" in response.headers["Location"]


@pytest.mark.parametrize(("path", "scoped"), READS)
def test_reading_needs_instances_read_in_the_partition(people, finance_instance, path, scoped):
    path = path.format(id=finance_instance)
    assert people("nobody").get(path).status_code == 403
    assert people("reader").get(path).status_code == 200
    assert people("hr_manager").get(path).status_code == (404 if scoped else 200)


@pytest.mark.parametrize(("path", "data"), ACTIONS)
def test_changes_need_instances_manage_in_the_partition(people, finance_instance, path, data):
    path = path.format(id=finance_instance)
    data = {key: value.format(id=finance_instance) for key, value in data.items()}
    for name, expected in (("nobody", 403), ("reader", 403)):
        client = people(name)
        token = csrf_token(client, "/")
        assert client.post(path, data={**data, "csrf_token": token}).status_code == expected
    hr_manager = people("hr_manager")
    token = csrf_token(hr_manager, "/operations/")
    outcome = hr_manager.post(path, data={**data, "csrf_token": token})
    if path == "/operations/bulk":
        page = failed_page(hr_manager, outcome, "/operations/instances")
        assert "Select at least one instance" in page, "another partition's is not selectable"
    else:
        assert outcome.status_code == 404
    manager = people("manager")
    token = csrf_token(manager, "/operations/")
    assert manager.post(path, data={**data, "csrf_token": token}).status_code in (303, 409)


def test_forms_without_the_csrf_token_are_refused(people, finance_instance):
    manager = people("manager")
    path = f"/operations/instances/{finance_instance}/cancel"
    assert manager.post(path, data={"reason": "x"}).status_code == 400
