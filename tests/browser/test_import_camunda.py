"""End to end: a Camunda 7 model with a collaboration, candidate groups and formData is
imported through the page, its pool picked and its group mapped on the import report; it is
published without installing anything, started, its task completed, and the instance ends."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import serious_violations, sign_in

pytestmark = pytest.mark.browser

CLAIMS = Path(__file__).parent / "files" / "camunda7_claims.bpmn"


def test_a_camunda_7_model_runs_after_import(page, demo):
    sign_in(page, "designer")
    page.goto("/designer/import")
    page.get_by_label("BPMN or JSON file").set_input_files(str(CLAIMS))
    page.get_by_role("button", name="Import").click()

    assert serious_violations(page) == []
    page.get_by_label("Claims handling (becomes claims_handling, 5 elements)").check()
    page.get_by_label("Key").fill("claims")
    page.get_by_role("button", name="Import").click()

    expect(page.get_by_role("heading", name="Import report: Claims handling")).to_be_visible()
    expect(page.get_by_role("heading", name="Needs a person (1)")).to_be_visible()
    assert serious_violations(page) == []
    taken = page.get_by_role("region", name="Taken from the file")
    expect(taken).to_contain_text("form with 2 fields: amount, approved")
    expect(taken).to_contain_text("condition $vars.approved")
    kept = page.get_by_role("region", name="Kept as documentation only")
    expect(kept).to_contain_text("2 pools")
    expect(kept).to_contain_text("1 message flow")
    page.get_by_label("For group claims-team").select_option("clerk")
    page.get_by_role("button", name="Apply to the draft").click()
    expect(page.get_by_text("Mapped claims-team → clerk.")).to_be_visible()
    expect(page.get_by_role("heading", name="Needs a person (0)")).to_be_visible()

    page.get_by_role("link", name="Diagram").click()
    page.wait_for_selector("#designer[data-ready=true]")
    for pool in ("Participant_claims", "Participant_payments"):
        expect(page.locator(f'.djs-shape[data-element-id="{pool}"]')).to_be_visible()
    expect(page.locator('.djs-connection[data-element-id="MessageFlow_pay"]')).to_be_attached()
    page.locator('.djs-shape[data-element-id="Task_pay"]').click()
    expect(page.locator("#props")).to_contain_text("part of another pool")

    page.goto(page.url.replace("/designer/", "/designer/").rstrip("/") + "/publish")
    page.get_by_label("Change note").fill("Imported from Camunda Modeler")
    page.get_by_role("button", name="Publish version 1").click()
    page.wait_for_url("**/versions")

    page.context.clear_cookies()
    sign_in(page, "alice")
    page.goto("/inbox/processes")
    page.get_by_role("button", name="Start Claims handling").click()
    page.wait_for_url("**/inbox/tasks/*")  # alice is a clerk: her task opens at once
    page.get_by_label("Amount").fill("120")
    page.get_by_label("Approved?").check()
    page.get_by_role("button", name="Complete").click()
    expect(page.get_by_text("is complete")).to_be_visible()
    page.goto("/inbox/requests")
    row = page.get_by_role("row").filter(has_text="Claims handling")
    expect(row).to_contain_text("completed")
    expect(row).to_contain_text("Claim paid")
