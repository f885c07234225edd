"""Column types that differ per backend."""

from sqlalchemy import JSON
from sqlalchemy.dialects.postgresql import JSONB

# JSON on SQLite, JSONB on PostgreSQL (indexable, comparable).
JSONType = JSON().with_variant(JSONB(), "postgresql")
