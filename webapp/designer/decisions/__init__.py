"""Decision models in the designer: list, import, the table editor, testing, versions."""

from webapp.designer.decisions import (  # noqa: F401  (importing the views registers routes)
    pages,
    table_editor,
    testing,
)
