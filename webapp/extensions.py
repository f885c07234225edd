"""Flask extensions, created unbound here and bound to the app in the factory."""

from flask import current_app
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf.csrf import CSRFProtect
from htmx_flask import Htmx
from sqlalchemy import MetaData

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# A pooled connection that sat idle is checked before use: see webapp/infra/database.py.
db = SQLAlchemy(metadata=MetaData(naming_convention=NAMING_CONVENTION))
migrate = Migrate(compare_type=True, render_as_batch=True)


class SignInCookies(LoginManager):
    """Flask-Login, whose removal of the remember-me cookie carries the cookie's own Secure,
    HttpOnly and SameSite attributes (Flask-Login sends a bare deletion)."""

    def _clear_cookie(self, response):  # type: ignore[no-untyped-def]
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
