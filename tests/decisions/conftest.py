"""Decision test fixtures: a pricing model imported through the service."""

from __future__ import annotations

import pytest

from tests.helpers.decisions import DISCOUNT_DMN, designer_user, partition_id
from webapp.services import decisions


@pytest.fixture
def import_model(db_session, demo):
    """Import a DMN file (the pricing table unless told) as a new model; returns its id."""

    def make(data: str = DISCOUNT_DMN, key: str = "", partition: str | None = "finance") -> int:
        model, _ = decisions.import_new(
            data,
            key=key,
            partition_id=partition_id(db_session, partition),
            actor=designer_user(db_session),
        )
        return model.id

    return make
