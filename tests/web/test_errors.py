"""A server error shows the styled 500 page and leaves nothing half-written."""

from sqlalchemy import select

from webapp import create_app
from webapp.extensions import db
from webapp.models import Partition


def test_500_rolls_back_and_renders_the_error_page(app_config, db_session):
    failing = create_app(app_config)

    @failing.route("/boom", methods=["POST"])
    def boom():
        db.session.add(Partition(key="half", name="Half written"))
        db.session.flush()
        raise RuntimeError("a bug in a view")

    @failing.after_request
    def commit_after(response):
        # Code that commits after the error (an audit write, say) must not save the half row.
        db.session.commit()
        return response

    failing.config["WTF_CSRF_ENABLED"] = False
    response = failing.test_client().post("/boom")
    assert response.status_code == 500
    page = response.get_data(as_text=True)
    assert "Something went wrong" in page
    assert "a bug in a view" not in page, "internals are not shown to users"
    assert db_session.scalar(select(Partition).where(Partition.key == "half")) is None


def test_404_and_405_pages(client):
    assert "Not found" in client.get("/no/such/page").get_data(as_text=True)
    response = client.get("/logout")
    assert response.status_code == 405
    assert "Method not allowed" in response.get_data(as_text=True)


def test_a_500_after_a_commit_does_not_claim_that_nothing_was_saved(app_config, db_session):
    failing = create_app(app_config)

    @failing.route("/half", methods=["POST"])
    def half():
        db.session.add(Partition(key="saved-first", name="Saved first"))
        db.session.commit()
        raise RuntimeError("a bug after the commit")

    failing.config["WTF_CSRF_ENABLED"] = False
    response = failing.test_client().post("/half")
    assert response.status_code == 500
    page = response.get_data(as_text=True)
    assert "nothing was saved" not in page.lower()
    assert "Part of the change was saved" in page
    assert db_session.scalar(select(Partition).where(Partition.key == "saved-first"))
