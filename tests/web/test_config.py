"""The app factory and its settings: defaults, environment, overrides, and fail-fast checks."""

import secrets

import pytest

from webapp import create_app
from webapp.config import ConfigError, normalize_database_url


def test_defaults_give_sqlite_in_instance_and_a_kept_secret(tmp_path, monkeypatch):
    for name in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "FLOWDESK_ENV"):
        monkeypatch.delenv(name, raising=False)
    app = create_app({"INSTANCE_PATH": str(tmp_path)})
    assert app.config["SQLALCHEMY_DATABASE_URI"] == f"sqlite:///{tmp_path / 'flowdesk.sqlite3'}"
    assert app.config["REDIS_URL"] is None
    first = app.config["SECRET_KEY"]
    assert len(first) >= 32
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0
    again = create_app({"INSTANCE_PATH": str(tmp_path)})
    assert again.config["SECRET_KEY"] == first


def test_environment_then_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db.example/flow")
    monkeypatch.setenv("REDIS_URL", "redis://cache:6379/2")
    monkeypatch.setenv("SECRET_KEY", "from-env")
    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "from-mapping"})
    assert app.config["SQLALCHEMY_DATABASE_URI"] == "postgresql+psycopg://u:p@db.example/flow"
    assert app.config["REDIS_URL"] == "redis://cache:6379/2"
    assert app.config["SECRET_KEY"] == "from-mapping"


def test_session_cookie_is_httponly_and_lax(tmp_path):
    app = create_app({"INSTANCE_PATH": str(tmp_path)})
    assert app.config["SESSION_COOKIE_HTTPONLY"] is True
    assert app.config["SESSION_COOKIE_SAMESITE"] == "Lax"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"REDIS_URL": "redis://r", "SECRET_KEY": "x" * 40}, "DATABASE_URL is not set"),
        ({"DATABASE_URL": "postgresql://h/d", "SECRET_KEY": "x" * 40}, "REDIS_URL is not set"),
        ({"DATABASE_URL": "postgresql://h/d", "REDIS_URL": "redis://r"}, "SECRET_KEY is not set"),
        (
            {"DATABASE_URL": "postgresql://h/d", "REDIS_URL": "redis://r", "SECRET_KEY": "short"},
            "SECRET_KEY is too short",
        ),
        (
            {"DATABASE_URL": "mysql://h/d", "REDIS_URL": "redis://r", "SECRET_KEY": "x" * 40},
            "DATABASE_URL must be a postgresql:// or sqlite:// URL",
        ),
        (
            {"DATABASE_URL": "postgresql://h/d", "REDIS_URL": "http://r", "SECRET_KEY": "x" * 40},
            "REDIS_URL must start with",
        ),
    ],
)
def test_production_fails_fast_naming_the_setting(tmp_path, monkeypatch, env, message):
    for name in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FLOWDESK_ENV", "production")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ConfigError, match=message):
        create_app({"INSTANCE_PATH": str(tmp_path), "FLOWDESK_ENV": "production"})


@pytest.mark.parametrize("key", [" " * 32, "a" * 32, "ab" * 20, "0123456789" * 4, "password" * 5])
def test_production_refuses_a_secret_key_without_randomness(tmp_path, monkeypatch, key):
    monkeypatch.setenv("FLOWDESK_ENV", "production")
    settings = {
        "INSTANCE_PATH": str(tmp_path),
        "FLOWDESK_ENV": "production",
        "SQLALCHEMY_DATABASE_URI": "postgresql://h/d",
        "REDIS_URL": "redis://r",
        "SECRET_KEY": key,
    }
    with pytest.raises(ConfigError, match="SECRET_KEY is not random enough") as refused:
        create_app(settings)
    assert "secrets.token_urlsafe(48)" in str(refused.value), "says how to make a good one"
    good = secrets.token_urlsafe(48)
    assert create_app({**settings, "SECRET_KEY": good}).config["SECRET_KEY"] == good


def test_unknown_environment_and_bad_numbers_are_named(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="FLOWDESK_ENV must be one of"):
        create_app({"INSTANCE_PATH": str(tmp_path), "FLOWDESK_ENV": "staging"})
    monkeypatch.setenv("LOGIN_MAX_FAILURES", "many")
    with pytest.raises(ConfigError, match="LOGIN_MAX_FAILURES='many' is not valid"):
        create_app({"INSTANCE_PATH": str(tmp_path)})


def test_production_with_complete_settings_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWDESK_ENV", "production")
    app = create_app(
        {
            "INSTANCE_PATH": str(tmp_path),
            "FLOWDESK_ENV": "production",
            "SQLALCHEMY_DATABASE_URI": "postgresql://u@localhost/flow",
            "REDIS_URL": "redis://localhost:6379/0",
            "SECRET_KEY": secrets.token_urlsafe(48),
        }
    )
    assert app.config["FLOWDESK_ENV"] == "production"


def test_normalize_database_url():
    assert normalize_database_url("postgresql://a/b") == "postgresql+psycopg://a/b"
    assert normalize_database_url("sqlite:///x.db") == "sqlite:///x.db"


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_a_schedule_interval_must_be_a_positive_number_of_seconds(tmp_path, monkeypatch, value):
    monkeypatch.setenv("SCHEDULE_INTERVAL", value)
    with pytest.raises(ConfigError, match="SCHEDULE_INTERVAL"):
        create_app({"INSTANCE_PATH": str(tmp_path)})
    monkeypatch.setenv("SCHEDULE_INTERVAL", "0.5")
    assert create_app({"INSTANCE_PATH": str(tmp_path)}).config["SCHEDULE_INTERVAL"] == 0.5
