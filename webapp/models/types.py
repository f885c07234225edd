"""Column types that differ per backend."""

from sqlalchemy import JSON
from sqlalchemy.dialects.postgresql import JSONB

# JSON on SQLite, JSONB on PostgreSQL (indexable, comparable): for data that is filtered on.
JSONType = JSON().with_variant(JSONB(), "postgresql")

# Plain JSON everywhere: PostgreSQL keeps the text as written, so key order survives. Process
# documents need it: node and flow order is what the modeller drew and what export writes.
OrderedJSON = JSON()
