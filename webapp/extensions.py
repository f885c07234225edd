"""Flask extensions, created unbound here and bound to the app in the factory."""

from typing import TYPE_CHECKING, ClassVar

from flask import Response, current_app
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf.csrf import CSRFProtect
from htmx_flask import Htmx
from sqlalchemy import MetaData, Table
from sqlalchemy.orm import DeclarativeBase

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """The typed declarative base; `db.Model` is this class with Flask-SQLAlchemy's mixins."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)

    if TYPE_CHECKING:
        # Every model maps one Table (DeclarativeBase allows any FromClause), so the engine
        # can call insert() and update() on __table__.
        __table__: ClassVar[Table]


# A pooled connection that sat idle is checked before use: see webapp/infra/database.py.
db = SQLAlchemy(model_class=Base)
migrate = Migrate(compare_type=True, render_as_batch=True)


class SignInCookies(LoginManager):
    """Flask-Login, whose removal of the remember-me cookie carries the cookie's own Secure,
    HttpOnly and SameSite attributes (Flask-Login sends a bare deletion)."""

    def _clear_cookie(self, response: Response) -> None:
        config = current_app.config
        response.delete_cookie(
            config.get("REMEMBER_COOKIE_NAME", "remember_token"),
            domain=config.get("REMEMBER_COOKIE_DOMAIN"),
            path=config.get("REMEMBER_COOKIE_PATH", "/"),
            secure=bool(config.get("REMEMBER_COOKIE_SECURE")),
            httponly=bool(config.get("REMEMBER_COOKIE_HTTPONLY", True)),
            samesite=config.get("REMEMBER_COOKIE_SAMESITE", "Lax"),
        )


login_manager = SignInCookies()
csrf = CSRFProtect()
htmx = Htmx()
