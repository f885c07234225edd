"""The landing page: the areas the signed-in user may open."""

from flask import Blueprint, render_template
from flask_login import login_required

bp = Blueprint("home", __name__)


@bp.route("/")
@login_required
def index():
    return render_template("home.html")


@bp.route("/healthz")
def healthz():
    return {"status": "ok"}
