"""Sending one e-mail: SMTP when SMTP_HOST is set, otherwise a row in the outbox table.

Both ways are once-only per key: the outbox row's key is unique, and the SMTP message carries a
Message-ID made from the key so a receiving system can drop a repeated delivery. The
`email.send` tool and the notifications share this one path.
"""

from __future__ import annotations

import hashlib
import re
import smtplib
from collections.abc import Mapping
from email.message import EmailMessage
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from webapp.engine.tools import ToolError
from webapp.extensions import db
from webapp.models import OutboxMessage

ADDRESS = re.compile(r"^[^@\s<>,;]+@[^@\s<>,;.]+(\.[^@\s<>,;.]+)+$")
MAX_RECIPIENTS = 50


def recipients(value: Any) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ToolError(
            "bad_request", "'to' must be an address or a list of them.", retryable=False
        )
    addresses = [str(item).strip() for item in items]
    bad = [a for a in addresses if not ADDRESS.match(a)]
    if bad:
        raise ToolError("bad_request", f"{bad[0]!r} is not an e-mail address.", retryable=False)
    if len(addresses) > MAX_RECIPIENTS:
        raise ToolError("bad_request", f"At most {MAX_RECIPIENTS} recipients.", retryable=False)
    return addresses


def send(
    config: Mapping[str, Any],
    *,
    key: str,
    to: list[str],
    subject: str,
    body: str,
    instance_id: int | None = None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Send (or keep in the outbox) one message, once per `key`; raises ToolError."""
    subject = subject[:500].replace("\r", " ").replace("\n", " ")
    if config.get("SMTP_HOST"):
        return _smtp(config, key, to, subject, body, timeout)
    return _outbox(key, instance_id, to, subject, body)


def message_id(key: str) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return f"<{digest}@flowdesk>"


def _smtp(
    config: Mapping[str, Any], key: str, to: list[str], subject: str, body: str, timeout: float
) -> dict[str, Any]:
    message = EmailMessage()
    message["From"] = config.get("SMTP_SENDER") or "flowdesk@localhost"
    message["To"] = ", ".join(to)
    message["Subject"] = subject
    message["Message-ID"] = message_id(key)
    message.set_content(body)
    try:
        port = int(config.get("SMTP_PORT") or 25)
        with smtplib.SMTP(config["SMTP_HOST"], port, timeout=timeout) as smtp:
            if config.get("SMTP_STARTTLS"):
                smtp.starttls()
            if config.get("SMTP_USERNAME"):
                smtp.login(config["SMTP_USERNAME"], config.get("SMTP_PASSWORD") or "")
            smtp.send_message(message)
    except smtplib.SMTPRecipientsRefused as error:
        raise ToolError("smtp_refused", f"Recipients refused: {error}", retryable=False) from None
    except (smtplib.SMTPException, OSError) as error:
        raise ToolError("smtp_failed", f"Sending failed: {error}") from None
    return {"sent": True, "to": to, "message_id": message["Message-ID"]}


def _outbox(
    key: str, instance_id: int | None, to: list[str], subject: str, body: str
) -> dict[str, Any]:
    table = OutboxMessage.__table__
    with db.engine.connect() as connection:
        connection = connection.execution_options(sqlite_begin="IMMEDIATE")
        with connection.begin():
            insert = _insert(connection.dialect.name, table)
            connection.execute(
                insert.values(
                    key=key,
                    instance_id=instance_id,
                    recipients=to,
                    subject=subject,
                    body=body,
                ).on_conflict_do_nothing(index_elements=["key"])
            )
            row_id = connection.scalar(select(table.c.id).where(table.c.key == key))
    return {"sent": False, "outbox_id": row_id, "to": to}


def _insert(dialect: str, table: Any) -> Any:
    if dialect == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)
