"""Configuration: defaults, then the environment, then the mapping the caller passes.

Outside development and testing a missing or invalid setting stops start-up with a message
that names the setting, so a misconfigured production deploy never half-starts.
"""

from __future__ import annotations

import math
import os
import secrets
from collections import Counter
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from gunicorn.errors import AppImportError

# The checkout Flowdesk runs from: templates/, static/, migrations/ and worker.py live here.
ROOT = Path(__file__).resolve().parent.parent

ENVIRONMENTS = ("development", "testing", "production")
# Where docs/deploy.md puts the production settings; FLOWDESK_SETTINGS_FILE names another place.
SETTINGS_FILE = "/etc/flowdesk/flowdesk.env"


class ConfigError(AppImportError):
    """A setting is missing or invalid; the message names it. As gunicorn's AppImportError, a
    web worker reports it in one line and the gunicorn master stops instead of retrying."""


DEFAULTS: dict[str, Any] = {
    "FLOWDESK_ENV": "development",
    "SQLALCHEMY_DATABASE_URI": None,
    "SQLALCHEMY_ENGINE_OPTIONS": {},
    "REDIS_URL": None,
    "SECRET_KEY": None,
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Lax",
    "REMEMBER_COOKIE_HTTPONLY": True,
    "REMEMBER_COOKIE_SAMESITE": "Lax",
    "WTF_CSRF_TIME_LIMIT": None,
    "MAX_CONTENT_LENGTH": 10 * 1024 * 1024,
    "LOGIN_MAX_FAILURES": 5,
    "LOGIN_ADDRESS_MAX_FAILURES": 50,
    "LOGIN_LOCKOUT_SECONDS": 15 * 60,
    "SESSION_DAYS": 30,
    "TRUSTED_PROXIES": 0,
    "RQ_QUEUE": "flowdesk",
    "PAGE_SIZE": 25,
    "LOG_LEVEL": "INFO",
    "LOG_FORMAT": "text",
    # Engine and workers (docs/engine.md).
    "SWEEP_INTERVAL": 5.0,
    "SWEEP_GRACE": 10.0,
    "SCHEDULE_INTERVAL": 5.0,
    "TIMER_INTERVAL": 0.5,
    "JOB_LEASE_GRACE": 10.0,
    "MULTI_INSTANCE_LIMIT": 10_000,
    "MULTI_INSTANCE_BATCH": 500,
    "CALL_DEPTH_LIMIT": 16,
    "SIGNAL_BATCH": 500,
    # Operations (docs/operations.md).
    "RETENTION_DAYS": 30,
    "RETENTION_INTERVAL": 3600.0,
    "BULK_LIMIT": 10_000,
    # Built-in tools.
    "HTTP_ALLOWED_HOSTS": [],
    "HTTP_ALLOW_PRIVATE": False,
    "SMTP_HOST": None,
    "SMTP_PORT": 587,
    "SMTP_USERNAME": None,
    "SMTP_PASSWORD": None,
    "SMTP_STARTTLS": True,
    "SMTP_SENDER": "flowdesk@localhost",
    # Webhooks out (docs/webhooks.md).
    "WEBHOOK_ALLOW_PRIVATE": False,
    "WEBHOOK_TIMEOUT": 10.0,
    "WEBHOOK_INTERVAL": 1.0,
    "WEBHOOK_REFRESH": 5.0,
    "WEBHOOK_BACKOFF": 5.0,
    "WEBHOOK_RETRY_FOR": 86400.0,
    "WEBHOOK_PAUSE_AFTER": 20,
    "WEBHOOK_PAUSE_SPAN": 86400.0,
    "WEBHOOK_KEEP_DAYS": 30,
    # Notifications to people (docs/notifications.md).
    "PUBLIC_URL": "http://127.0.0.1:5000",
    "NOTIFY_INTERVAL": 30.0,
    "NOTIFY_DUE_SOON": 24,
    "NOTIFY_DIGEST_HOUR": 7,
}


def _flag(value: str) -> bool:
    return value.lower() in ("1", "true", "yes")


def _names(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


# Environment variable -> (config key, parser).
ENVIRONMENT_SETTINGS: dict[str, tuple[str, Any]] = {
    "FLOWDESK_ENV": ("FLOWDESK_ENV", str),
    "DATABASE_URL": ("SQLALCHEMY_DATABASE_URI", str),
    "REDIS_URL": ("REDIS_URL", str),
    "SECRET_KEY": ("SECRET_KEY", str),
    "SESSION_COOKIE_SECURE": ("SESSION_COOKIE_SECURE", lambda v: v.lower() in ("1", "true", "yes")),
    "LOGIN_MAX_FAILURES": ("LOGIN_MAX_FAILURES", int),
    "LOGIN_ADDRESS_MAX_FAILURES": ("LOGIN_ADDRESS_MAX_FAILURES", int),
    "LOGIN_LOCKOUT_SECONDS": ("LOGIN_LOCKOUT_SECONDS", int),
    "SESSION_DAYS": ("SESSION_DAYS", int),
    "TRUSTED_PROXIES": ("TRUSTED_PROXIES", int),
    "RQ_QUEUE": ("RQ_QUEUE", str),
    "LOG_LEVEL": ("LOG_LEVEL", str.upper),
    "LOG_FORMAT": ("LOG_FORMAT", str.lower),
    "SWEEP_INTERVAL": ("SWEEP_INTERVAL", float),
    "SWEEP_GRACE": ("SWEEP_GRACE", float),
    "SCHEDULE_INTERVAL": ("SCHEDULE_INTERVAL", float),
    "TIMER_INTERVAL": ("TIMER_INTERVAL", float),
    "JOB_LEASE_GRACE": ("JOB_LEASE_GRACE", float),
    "MULTI_INSTANCE_LIMIT": ("MULTI_INSTANCE_LIMIT", int),
    "MULTI_INSTANCE_BATCH": ("MULTI_INSTANCE_BATCH", int),
    "CALL_DEPTH_LIMIT": ("CALL_DEPTH_LIMIT", int),
    "SIGNAL_BATCH": ("SIGNAL_BATCH", int),
    "RETENTION_DAYS": ("RETENTION_DAYS", int),
    "RETENTION_INTERVAL": ("RETENTION_INTERVAL", float),
    "BULK_LIMIT": ("BULK_LIMIT", int),
    "HTTP_ALLOWED_HOSTS": ("HTTP_ALLOWED_HOSTS", _names),
    "HTTP_ALLOW_PRIVATE": ("HTTP_ALLOW_PRIVATE", _flag),
    "SMTP_HOST": ("SMTP_HOST", str),
    "SMTP_PORT": ("SMTP_PORT", int),
    "SMTP_USERNAME": ("SMTP_USERNAME", str),
    "SMTP_PASSWORD": ("SMTP_PASSWORD", str),
    "SMTP_STARTTLS": ("SMTP_STARTTLS", _flag),
    "SMTP_SENDER": ("SMTP_SENDER", str),
    "WEBHOOK_ALLOW_PRIVATE": ("WEBHOOK_ALLOW_PRIVATE", _flag),
    "WEBHOOK_TIMEOUT": ("WEBHOOK_TIMEOUT", float),
    "WEBHOOK_INTERVAL": ("WEBHOOK_INTERVAL", float),
    "WEBHOOK_REFRESH": ("WEBHOOK_REFRESH", float),
    "WEBHOOK_BACKOFF": ("WEBHOOK_BACKOFF", float),
    "WEBHOOK_RETRY_FOR": ("WEBHOOK_RETRY_FOR", float),
    "WEBHOOK_PAUSE_AFTER": ("WEBHOOK_PAUSE_AFTER", int),
    "WEBHOOK_PAUSE_SPAN": ("WEBHOOK_PAUSE_SPAN", float),
    "WEBHOOK_KEEP_DAYS": ("WEBHOOK_KEEP_DAYS", int),
    "PUBLIC_URL": ("PUBLIC_URL", str),
    "NOTIFY_INTERVAL": ("NOTIFY_INTERVAL", float),
    "NOTIFY_DUE_SOON": ("NOTIFY_DUE_SOON", int),
    "NOTIFY_DIGEST_HOUR": ("NOTIFY_DIGEST_HOUR", int),
}


def load_config(instance_path: Path, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Build the final settings and check them; raise ConfigError naming any bad setting."""
    config = dict(DEFAULTS)
    for variable, (key, parse) in ENVIRONMENT_SETTINGS.items():
        raw = os.environ.get(variable)
        if raw is None or raw == "":
            continue
        try:
            config[key] = parse(raw)
        except ValueError as exc:
            raise ConfigError(f"{variable}={raw!r} is not valid: {exc}") from exc
    if overrides:
        config.update(overrides)
        if overrides.get("TESTING"):
            config.setdefault("FLOWDESK_ENV", "testing")
            if "FLOWDESK_ENV" not in overrides:
                config["FLOWDESK_ENV"] = "testing"
    _check(config, instance_path)
    return config


def settings_file() -> Path:
    """The production settings file this machine would have (docs/deploy.md, step 3)."""
    return Path(os.environ.get("FLOWDESK_SETTINGS_FILE") or SETTINGS_FILE)


def development_fallback(overrides: Mapping[str, Any] | None = None) -> bool:
    """True when nothing chose the environment or the database, so the development defaults
    (a SQLite file under instance/) apply: often a shell that did not load the settings."""
    given = dict(overrides or {})
    chosen = ("FLOWDESK_ENV", "TESTING", "SQLALCHEMY_DATABASE_URI")
    return not any(given.get(key) for key in chosen) and not any(
        os.environ.get(variable) for variable in ("FLOWDESK_ENV", "DATABASE_URL")
    )


def normalize_database_url(url: str) -> str:
    """Accept the URL forms hosting providers hand out and pick the psycopg 3 driver."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def _check(config: dict[str, Any], instance_path: Path) -> None:
    env = config["FLOWDESK_ENV"]
    if env not in ENVIRONMENTS:
        raise ConfigError(f"FLOWDESK_ENV must be one of {', '.join(ENVIRONMENTS)}, not {env!r}")
    production = env == "production"

    url = config.get("SQLALCHEMY_DATABASE_URI")
    if not url:
        if production:
            raise ConfigError("DATABASE_URL is not set: production needs a PostgreSQL URL")
        url = f"sqlite:///{instance_path / 'flowdesk.sqlite3'}"
    url = normalize_database_url(url)
    if not url.startswith(("sqlite:", "postgresql+psycopg:")):
        raise ConfigError(f"DATABASE_URL must be a postgresql:// or sqlite:// URL, not {url!r}")
    config["SQLALCHEMY_DATABASE_URI"] = url

    if production and not config.get("REDIS_URL"):
        raise ConfigError("REDIS_URL is not set: production needs a Redis server URL")
    redis_url = config.get("REDIS_URL")
    if redis_url and not redis_url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(
            f"REDIS_URL must start with redis://, rediss:// or unix://, not {redis_url!r}"
        )

    key = config.get("SECRET_KEY")
    if not key:
        if production:
            raise ConfigError("SECRET_KEY is not set: production needs a long random value")
        key = _development_secret(instance_path)
    elif production:
        _check_secret(key)
    config["SECRET_KEY"] = key

    if config.get("LOG_LEVEL") not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ConfigError("LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL")
    if config.get("LOG_FORMAT") not in ("text", "json"):
        raise ConfigError("LOG_FORMAT must be text or json")
    for name in (
        "LOGIN_MAX_FAILURES",
        "LOGIN_ADDRESS_MAX_FAILURES",
        "LOGIN_LOCKOUT_SECONDS",
        "SESSION_DAYS",
    ):
        if not isinstance(config.get(name), int) or config[name] < 1:
            raise ConfigError(f"{name} must be a whole number of at least 1")
    if not isinstance(config.get("TRUSTED_PROXIES"), int) or config["TRUSTED_PROXIES"] < 0:
        raise ConfigError("TRUSTED_PROXIES must be a whole number, 0 or more")
    # Sign-ins (and their remember-me cookies) end SESSION_DAYS after they began; the
    # remember-me cookie is as Secure as the session cookie unless set on its own.
    config["REMEMBER_COOKIE_DURATION"] = timedelta(days=config["SESSION_DAYS"])
    config.setdefault("REMEMBER_COOKIE_SECURE", bool(config.get("SESSION_COOKIE_SECURE")))
    waits = ("WEBHOOK_REFRESH", "WEBHOOK_BACKOFF", "WEBHOOK_RETRY_FOR", "WEBHOOK_PAUSE_SPAN")
    for name in ("SWEEP_INTERVAL", "SWEEP_GRACE", "JOB_LEASE_GRACE", "RETENTION_INTERVAL", *waits):
        if not isinstance(config.get(name), int | float) or config[name] < 0:
            raise ConfigError(f"{name} must be a number of seconds, 0 or more")
    for name in ("SCHEDULE_INTERVAL", "TIMER_INTERVAL", "WEBHOOK_INTERVAL", "WEBHOOK_TIMEOUT"):
        interval = config.get(name)
        if (
            not isinstance(interval, int | float)
            or isinstance(interval, bool)
            or not math.isfinite(interval)
            or interval <= 0
        ):
            raise ConfigError(f"{name} must be a number of seconds greater than 0")
    counts: tuple[str, ...] = ("MULTI_INSTANCE_LIMIT", "MULTI_INSTANCE_BATCH", "CALL_DEPTH_LIMIT")
    counts += ("SIGNAL_BATCH", "WEBHOOK_PAUSE_AFTER")
    for name in counts:
        if not isinstance(config.get(name), int) or config[name] < 1:
            raise ConfigError(f"{name} must be a whole number of at least 1")
    for name in ("RETENTION_DAYS", "BULK_LIMIT", "WEBHOOK_KEEP_DAYS"):
        if not isinstance(config.get(name), int) or config[name] < 0:
            raise ConfigError(f"{name} must be a whole number, 0 or more")
    _check_notifications(config)


def _check_notifications(config: dict[str, Any]) -> None:
    """The links in mails need an absolute address; the scan needs a pace and an hour."""
    url = config.get("PUBLIC_URL")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(f"PUBLIC_URL must start with http:// or https://, not {url!r}")
    config["PUBLIC_URL"] = url.rstrip("/")
    interval = config.get("NOTIFY_INTERVAL")
    if not isinstance(interval, int | float) or not math.isfinite(interval) or interval <= 0:
        raise ConfigError("NOTIFY_INTERVAL must be a number of seconds greater than 0")
    due_soon = config.get("NOTIFY_DUE_SOON")
    if not isinstance(due_soon, int) or due_soon < 0:
        raise ConfigError("NOTIFY_DUE_SOON must be a whole number of hours, 0 or more")
    hour = config.get("NOTIFY_DIGEST_HOUR")
    if not isinstance(hour, int) or not 0 <= hour <= 23:
        raise ConfigError("NOTIFY_DIGEST_HOUR must be a whole hour from 0 to 23 (UTC)")


KEY_COMMAND = "python3 -c 'import secrets; print(secrets.token_urlsafe(48))'"


def secret_strength(key: str) -> float:
    """Estimated bits of randomness: the key's length times its Shannon entropy per character."""
    counts = Counter(key)
    return -len(key) * sum(n / len(key) * math.log2(n / len(key)) for n in counts.values())


def _check_secret(key: str) -> None:
    """Production keys sign sessions and CSRF tokens: long, and random rather than repeated."""
    if len(key) < 32:
        problem = "is too short: use at least 32 random characters"
    elif len(set(key)) < 12 or secret_strength(key) < 100:
        problem = "is not random enough (repeated or too few different characters)"
    else:
        return
    raise ConfigError(f"SECRET_KEY {problem}; generate one with: {KEY_COMMAND}")


def _development_secret(instance_path: Path) -> str:
    """Generate a development secret once and keep it, so sessions survive restarts."""
    path = instance_path / "secret_key"
    if path.exists():
        return path.read_text().strip()
    instance_path.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key
