"""Sign-in and sign-out views."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import flash, redirect, render_template, request, url_for
from flask_login import current_user, login_user, logout_user

from webapp.auth import bp
from webapp.auth.forms import LoginForm, LogoutForm
from webapp.services import accounts


def _safe_next(target: str | None) -> str:
    """Only same-site relative paths, so the login page is no open redirect."""
    if not target:
        return url_for("home.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return url_for("home.index")
    return target


@bp.route("/login", methods=["GET", "POST"])
def login():
    if current_user.is_authenticated:
        return redirect(url_for("home.index"))
    form = LoginForm()
    status = 200
    if form.validate_on_submit():
        result = accounts.authenticate(form.username.data, form.password.data, request.remote_addr)
        if result.user is not None:
            login_user(result.user, remember=form.remember.data)
            return redirect(_safe_next(request.args.get("next")))
        form.form_errors.append(result.error)
        status = 429 if result.locked else 401
    elif request.method == "POST":
        status = 422
    return render_template("auth/login.html", form=form), status


@bp.route("/logout", methods=["POST"])
def logout():
    form = LogoutForm()
    if form.validate_on_submit():
        logout_user()
        flash("You are signed out.", "info")
    return redirect(url_for("auth.login"))
