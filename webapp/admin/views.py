"""Admin views: thin wrappers over the accounts service."""

from __future__ import annotations

from flask import abort, flash, redirect, render_template, request, url_for
from sqlalchemy import or_, select
from wtforms.fields.choices import SelectChoice

from webapp.admin.blueprint import bp
from webapp.admin.forms import (
    NewUserForm,
    PartitionForm,
    PasswordForm,
    RoleForm,
    ServiceAccountForm,
    UserForm,
)
from webapp.extensions import db
from webapp.infra.pagination import paginate
from webapp.models import Partition, Role, User
from webapp.models.session import db_session
from webapp.services import accounts, notifications
from webapp.web.access import permission_required
from webapp.web.htmx import htmx_target
from webapp.web.notification_forms import preferences_form


@bp.before_request
@permission_required("admin")
def guard():
    """Every admin route needs the admin permission."""


def _fill_choices(form: UserForm | ServiceAccountForm) -> None:
    form.roles.choices = [
        (r.id, r.name) for r in db.session.scalars(select(Role).order_by(Role.name))
    ]
    form.partitions.choices = [
        SelectChoice(p.id, f"{p.name} ({p.key})")
        for p in db.session.scalars(select(Partition).order_by(Partition.name))
    ]


def _by_ids(model, ids: list[int]) -> list:
    return list(db.session.scalars(select(model).where(model.id.in_(ids)))) if ids else []


def _user_data(user: User) -> dict:
    """The edit form's values from the user; memberships as the ids the checkboxes carry (with
    `obj=user` WTForms would take the Role and Partition objects and tick nothing)."""
    return {
        "username": user.username,
        "display_name": user.display_name,
        "email": user.email,
        "active": user.active,
        "roles": [r.id for r in user.roles],
        "partitions": [p.id for p in user.partitions],
    }


@bp.route("/")
def index():
    counts = {
        "users": db.session.query(User).count(),
        "roles": db.session.query(Role).count(),
        "partitions": db.session.query(Partition).count(),
    }
    return render_template("admin/index.html", counts=counts)


@bp.route("/users")
def users():
    q = request.args.get("q", "").strip()
    query = select(User).where(User.service_account.is_(False)).order_by(User.username)
    if q:
        like = f"%{q.lower()}%"
        query = query.where(
            or_(User.username.ilike(like), User.display_name.ilike(like), User.email.ilike(like))
        )
    page = paginate(query, request.args.get("page", 1, type=int), 25)
    template = "admin/_users_table.html" if htmx_target() == "users-table" else "admin/users.html"
    return render_template(template, page=page, q=q)


@bp.route("/users/new", methods=["GET", "POST"])
def new_user():
    form = NewUserForm()
    _fill_choices(form)
    if form.validate_on_submit():
        try:
            accounts.create_user(
                form.username.data,
                form.password.data,
                display_name=form.display_name.data or "",
                email=form.email.data or "",
                roles=_by_ids(Role, form.roles.data),
                partitions=_by_ids(Partition, form.partitions.data),
            )
        except accounts.AccountError as error:
            getattr(form, error.field).errors.append(error.message)
        else:
            flash(f"User {form.username.data.strip().lower()} created.", "success")
            return redirect(url_for("admin.users"))
    status = 422 if request.method == "POST" else 200
    return render_template("admin/user_form.html", form=form, user=None), status


@bp.route("/users/<int:user_id>", methods=["GET", "POST"])
def edit_user(user_id: int):
    user = db.get_or_404(User, user_id)
    if user.service_account:
        return redirect(url_for("admin.edit_service_account", user_id=user.id))
    form = UserForm(data=_user_data(user))
    _fill_choices(form)
    form.username.render_kw = {"readonly": True}
    if form.validate_on_submit():
        accounts.update_user(
            user,
            display_name=form.display_name.data or "",
            email=form.email.data or "",
            active=form.active.data,
            roles=_by_ids(Role, form.roles.data),
            partitions=_by_ids(Partition, form.partitions.data),
        )
        flash(f"User {user.username} saved.", "success")
        return redirect(url_for("admin.users"))
    status = 422 if request.method == "POST" else 200
    return render_template(
        "admin/user_form.html", form=form, user=user, password_form=PasswordForm()
    ), status


@bp.route("/users/<int:user_id>/password", methods=["POST"])
def reset_password(user_id: int):
    user = db.get_or_404(User, user_id)
    if user.service_account:
        abort(404)  # a service account has no password: only its tokens reach it
    form = PasswordForm()
    if form.validate_on_submit():
        try:
            accounts.reset_password(user, form.password.data)
        except accounts.AccountError as error:
            form.password.errors.append(error.message)
        else:
            return render_template(
                "admin/_password_form.html", form=PasswordForm(formdata=None), user=user, saved=True
            )
    return render_template("admin/_password_form.html", form=form, user=user), 422


@bp.route("/roles", methods=["GET", "POST"])
def roles():
    form = RoleForm()
    if form.validate_on_submit():
        try:
            accounts.create_role(form.name.data, form.permissions.data, form.description.data or "")
        except accounts.AccountError as error:
            getattr(form, error.field).errors.append(error.message)
        else:
            flash(f"Role {form.name.data.strip()} created.", "success")
            return redirect(url_for("admin.roles"))
    status = 422 if request.method == "POST" else 200
    all_roles = list(db.session.scalars(select(Role).order_by(Role.name)))
    return render_template("admin/roles.html", form=form, roles=all_roles), status


@bp.route("/roles/<int:role_id>", methods=["GET", "POST"])
def edit_role(role_id: int):
    role = db.get_or_404(Role, role_id)
    form = RoleForm(
        obj=role,
        data=None if request.method == "POST" else {"permissions": sorted(role.permissions)},
    )
    form.name.render_kw = {"readonly": True}
    if form.validate_on_submit():
        accounts.update_role(
            role, permissions=form.permissions.data, description=form.description.data or ""
        )
        flash(f"Role {role.name} saved.", "success")
        return redirect(url_for("admin.roles"))
    status = 422 if request.method == "POST" else 200
    return render_template("admin/role_form.html", form=form, role=role), status


@bp.route("/partitions", methods=["GET", "POST"])
def partitions():
    form = PartitionForm()
    if form.validate_on_submit():
        try:
            accounts.create_partition(form.key.data, form.name.data)
        except accounts.AccountError as error:
            getattr(form, error.field).errors.append(error.message)
        else:
            flash(f"Partition {form.key.data} created.", "success")
            return redirect(url_for("admin.partitions"))
    status = 422 if request.method == "POST" else 200
    rows = list(db.session.scalars(select(Partition).order_by(Partition.name)))
    return render_template("admin/partitions.html", form=form, partitions=rows), status


@bp.route("/notifications", methods=["GET", "POST"])
def notification_defaults():
    """What users who made no choice of their own receive, per kind."""
    form_class = preferences_form(None)
    current = notifications.defaults(db_session())
    form = (
        form_class(data=current)
        if request.method == "POST"
        else form_class(formdata=None, data=current)
    )
    if form.validate_on_submit():
        choices = {kind: form[kind].data for kind in notifications.KINDS}
        notifications.set_defaults(db_session(), choices)
        flash("Notification defaults saved.", "success")
        return redirect(url_for("admin.notification_defaults"))
    status = 422 if request.method == "POST" else 200
    return render_template("admin/notifications.html", form=form, kinds=notifications.KINDS), status
