"""Admin views for API tokens and service accounts: thin wrappers over the api_tokens service."""

from __future__ import annotations

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.admin.blueprint import bp
from webapp.admin.forms import ServiceAccountForm, TokenFilterForm
from webapp.admin.views import _by_ids, _fill_choices
from webapp.extensions import db
from webapp.infra.pagination import paginate
from webapp.models import Partition, Role, User
from webapp.models.base import utcnow
from webapp.services import accounts, api_tokens
from webapp.web.token_forms import RevokeForm, TokenForm

PER_PAGE = 25


@bp.route("/tokens")
def tokens():
    """Every token, filtered by owner, kind and status, newest first."""
    filters = TokenFilterForm(request.args, meta={"csrf": False})
    if not filters.validate():
        filters = TokenFilterForm(formdata=None, meta={"csrf": False})
    query = api_tokens.token_query(
        owner=filters.owner.data or "",
        kind=filters.kind.data or "",
        status=filters.status.data or "",
    )
    page = paginate(query, request.args.get("page", 1, type=int), PER_PAGE)
    return render_template(
        "admin/tokens.html",
        page=page,
        tokens=page.items,
        filters=filters,
        revoke_form=RevokeForm(),
        now=utcnow(),
        args={k: v for k, v in filters.data.items() if v},
    )


@bp.route("/tokens/<int:token_id>/revoke", methods=["POST"])
def revoke_token(token_id: int):
    token = api_tokens.find_token(token_id)
    if token is None:
        abort(404)
    if RevokeForm().validate_on_submit():
        api_tokens.revoke(token)
        flash(f"Token {token.name} of {token.user.username} revoked.", "success")
    back = request.form.get("back", "")
    return redirect(back if back.startswith("/admin/") else url_for("admin.tokens"))


@bp.route("/service-accounts")
def service_accounts():
    page = paginate(
        api_tokens.service_account_query(), request.args.get("page", 1, type=int), PER_PAGE
    )
    return render_template("admin/service_accounts.html", page=page)


@bp.route("/service-accounts/new", methods=["GET", "POST"])
def new_service_account():
    form = ServiceAccountForm()
    _fill_choices(form)
    del form.active
    if form.validate_on_submit():
        try:
            account = api_tokens.create_service_account(
                form.username.data,
                display_name=form.display_name.data or "",
                roles=_by_ids(Role, form.roles.data),
                partitions=_by_ids(Partition, form.partitions.data),
            )
        except accounts.AccountError as error:
            getattr(form, error.field).errors.append(error.message)
        else:
            flash(f"Service account {account.username} created. Make it a token.", "success")
            return redirect(url_for("admin.edit_service_account", user_id=account.id))
    status = 422 if request.method == "POST" else 200
    return render_template("admin/service_account_form.html", form=form, account=None), status


def _service_account(user_id: int) -> User:
    account = db.get_or_404(User, user_id)
    if not account.service_account:
        abort(404)
    return account


def _edit_page(account: User, form: ServiceAccountForm, token_form: TokenForm, **extra):
    return render_template(
        "admin/service_account_form.html",
        form=form,
        account=account,
        token_form=token_form,
        tokens=api_tokens.tokens_of(account),
        revoke_form=RevokeForm(),
        now=utcnow(),
        **extra,
    )


@bp.route("/service-accounts/<int:user_id>", methods=["GET", "POST"])
def edit_service_account(user_id: int):
    """Change a service account's name, roles and partitions, or deactivate it (its tokens
    stop working while it is inactive)."""
    account = _service_account(user_id)
    form = ServiceAccountForm(
        data={
            "username": account.username,
            "display_name": account.display_name,
            "active": account.active,
            "roles": [r.id for r in account.roles],
            "partitions": [p.id for p in account.partitions],
        }
    )
    _fill_choices(form)
    form.username.render_kw = {"readonly": True}
    if form.validate_on_submit():
        accounts.update_user(
            account,
            display_name=form.display_name.data or "",
            email="",
            active=form.active.data,
            roles=_by_ids(Role, form.roles.data),
            partitions=_by_ids(Partition, form.partitions.data),
        )
        flash(f"Service account {account.username} saved.", "success")
        return redirect(url_for("admin.service_accounts"))
    status = 422 if request.method == "POST" else 200
    return _edit_page(account, form, TokenForm(formdata=None)), status


@bp.route("/service-accounts/<int:user_id>/tokens", methods=["POST"])
def service_account_token(user_id: int):
    """Make a token for a service account; its text is shown on the page this once."""
    account = _service_account(user_id)
    form = ServiceAccountForm(formdata=None, obj=account)
    _fill_choices(form)
    form.username.render_kw = {"readonly": True}
    form.roles.data = [r.id for r in account.roles]
    form.partitions.data = [p.id for p in account.partitions]
    token_form = TokenForm()
    if token_form.validate_on_submit():
        try:
            token, text = api_tokens.create_token(
                account,
                token_form.name.data,
                token_form.scopes.data,
                token_form.expires.data,
                created_by=current_user._get_current_object(),
            )
        except accounts.AccountError as error:
            getattr(token_form, error.field).errors.append(error.message)
        else:
            return _edit_page(
                account,
                form,
                TokenForm(formdata=None),
                new_token=text,
                new_token_name=token.name,
            )
    return _edit_page(account, form, token_form), 422
