"""The database session type the engine and services take."""

from sqlalchemy.orm import Session

from webapp.extensions import db


def db_session() -> Session:
    """The app context's session itself: `db.session` is a scoped proxy to it, which functions
    annotated with Session do not accept."""
    return db.session()
