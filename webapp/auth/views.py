"""Sign-in, sign-out and the user's own account page."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import abort, current_app, flash, redirect, render_template, request, session, url_for
from flask_login import current_user, login_required, login_user, logout_user

from webapp.auth.blueprint import bp
from webapp.auth.forms import LoginForm, LogoutForm, PasswordChangeForm, SignOutEverywhereForm
from webapp.models import User
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.services import accounts, api_tokens, notifications
from webapp.web.landing import landing_url
from webapp.web.notification_forms import EmailForm, preferences_form
from webapp.web.token_forms import RevokeForm, TokenForm


def _safe_next(target: str | None, user: User) -> str:
    """Only same-site relative paths, so the login page is no open redirect; without one, the
    page where the user works."""
    if not target:
        return landing_url(user)
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return landing_url(user)
    return target


def _remembered() -> bool:
    return current_app.config.get("REMEMBER_COOKIE_NAME", "remember_token") in request.cookies


@bp.route("/login", methods=["GET", "POST"])
def login():
    if current_user.is_authenticated:
        return redirect(landing_url(current_user))
    form = LoginForm()
    status = 200
    headers = {}
    if form.validate_on_submit():
        result = accounts.authenticate(form.username.data, form.password.data, request.remote_addr)
        if result.user is not None:
            accounts.sign_in(result.user)
            login_user(result.user, remember=form.remember.data)
            if not form.remember.data:
                session["_remember"] = "clear"  # drop a remember-me cookie of an earlier sign-in
            return redirect(_safe_next(request.args.get("next"), result.user))
        form.form_errors.append(result.error)
        status = 429 if result.locked else 401
        if result.locked:
            headers["Retry-After"] = str(result.retry_after)
    elif request.method == "POST":
        status = 422
    return render_template("auth/login.html", form=form), status, headers


@bp.route("/logout", methods=["POST"])
def logout():
    form = LogoutForm()
    if form.validate_on_submit():
        if current_user.is_authenticated:
            accounts.end_session(current_user._get_current_object())
        logout_user()
        flash("You are signed out.", "info")
    return redirect(url_for("auth.login"))


def _preferences_form(formdata: object = None):
    """The user's notification choices, "default" where they made none."""
    user_id = current_user.id
    form_class = preferences_form(notifications.defaults(db_session()))
    own = notifications.own_choices(db_session(), user_id)
    data = {kind: own.get(kind, "default") for kind in notifications.KINDS}
    return form_class(formdata=formdata, data=data)


def _account_page(
    password_form: PasswordChangeForm | None = None,
    status: int = 200,
    *,
    email_form: EmailForm | None = None,
    notify_form: object = None,
    token_form: TokenForm | None = None,
    new_token: tuple[str, str] | None = None,
):
    user = current_user._get_current_object()
    return render_template(
        "auth/account.html",
        password_form=password_form or PasswordChangeForm(formdata=None),
        everywhere_form=SignOutEverywhereForm(),
        sessions=accounts.session_count(user),
        tokens=api_tokens.tokens_of(user),
        token_form=token_form or TokenForm(formdata=None),
        revoke_form=RevokeForm(),
        new_token_name=new_token[0] if new_token else None,
        new_token=new_token[1] if new_token else None,
        now=utcnow(),
        email_form=email_form or EmailForm(formdata=None, data={"email": user.email}),
        notify_form=notify_form or _preferences_form(),
        kinds=notifications.KINDS,
    ), status


@bp.route("/account")
@login_required
def account():
    return _account_page()


@bp.route("/account/password", methods=["POST"])
@login_required
def change_password():
    form = PasswordChangeForm()
    if form.validate_on_submit():
        user = current_user._get_current_object()
        try:
            accounts.change_password(user, form.current_password.data, form.password.data)
        except accounts.AccountError as error:
            getattr(form, error.field).errors.append(error.message)
        else:
            login_user(user, remember=_remembered())  # this browser's new sign-in
            flash("Password changed. You are signed out on every other device.", "success")
            return redirect(url_for("auth.account"))
    return _account_page(form, 422)


@bp.route("/account/email", methods=["POST"])
@login_required
def change_email():
    form = EmailForm()
    if form.validate_on_submit():
        accounts.change_email(current_user._get_current_object(), form.email.data or "")
        flash("E-mail address saved.", "success")
        return redirect(url_for("auth.account"))
    return _account_page(status=422, email_form=form)


@bp.route("/account/notifications", methods=["POST"])
@login_required
def notification_preferences():
    form = _preferences_form(request.form)
    if form.validate_on_submit():
        choices = {kind: form[kind].data for kind in notifications.KINDS}
        notifications.set_preferences(db_session(), current_user.id, choices)
        flash("Notification choices saved.", "success")
        return redirect(url_for("auth.account"))
    return _account_page(status=422, notify_form=form)


@bp.route("/account/sign-out-everywhere", methods=["POST"])
@login_required
def sign_out_everywhere():
    form = SignOutEverywhereForm()
    if form.validate_on_submit():
        accounts.sign_out_everywhere(current_user._get_current_object())
        logout_user()
        flash("You are signed out on every device.", "info")
        return redirect(url_for("auth.login"))
    return redirect(url_for("auth.account"))


@bp.route("/account/tokens", methods=["POST"])
@login_required
def create_token():
    """Make a personal access token; its text is shown on the page this once."""
    form = TokenForm()
    if form.validate_on_submit():
        user = current_user._get_current_object()
        try:
            token, text = api_tokens.create_token(
                user, form.name.data, form.scopes.data, form.expires.data, created_by=user
            )
        except accounts.AccountError as error:
            getattr(form, error.field).errors.append(error.message)
        else:
            return _account_page(
                PasswordChangeForm(formdata=None), 200, new_token=(token.name, text)
            )
    return _account_page(PasswordChangeForm(formdata=None), 422, token_form=form)


@bp.route("/account/tokens/<int:token_id>/revoke", methods=["POST"])
@login_required
def revoke_token(token_id: int):
    token = api_tokens.find_token(token_id)
    if token is None or token.user_id != current_user.id:
        abort(404)
    if RevokeForm().validate_on_submit():
        api_tokens.revoke(token)
        flash(f"Token {token.name} revoked: it no longer works.", "success")
    return redirect(url_for("auth.account"))
