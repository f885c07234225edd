"""decisions: DMN decision models, their published versions and the decision ids each provides

Revision ID: 0029_decisions
Revises: 0028_scenario_coverage
Create Date: 2026-12-06 13:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0029_decisions"
down_revision = "0028_scenario_coverage"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "decision_models",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(100), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("partition_id", sa.Integer(), nullable=True),
        sa.Column("draft_document", sa.JSON(), nullable=True),
        sa.Column("draft_examples", sa.JSON(), nullable=False),
        sa.Column("draft_revision", sa.Integer(), nullable=False),
        sa.Column("import_problems", sa.JSON(), nullable=False),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by_id", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["partition_id"],
            ["partitions.id"],
            name=op.f("fk_decision_models_partition_id_partitions"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["created_by_id"],
            ["users.id"],
            name=op.f("fk_decision_models_created_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["updated_by_id"],
            ["users.id"],
            name=op.f("fk_decision_models_updated_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_decision_models")),
        sa.UniqueConstraint("key", name=op.f("uq_decision_models_key")),
    )
    op.create_index(
        op.f("ix_decision_models_partition_id"), "decision_models", ["partition_id"], unique=False
    )
    op.create_index(
        op.f("ix_decision_models_updated_at"), "decision_models", ["updated_at"], unique=False
    )
    op.create_table(
        "decision_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.Column("xml", sa.Text(), nullable=False),
        sa.Column("examples", sa.JSON(), nullable=False),
        sa.Column("change_note", sa.String(500), nullable=False),
        sa.Column("published_by_id", sa.Integer(), nullable=True),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["decision_models.id"],
            name=op.f("fk_decision_versions_model_id_decision_models"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["published_by_id"],
            ["users.id"],
            name=op.f("fk_decision_versions_published_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_decision_versions")),
        sa.UniqueConstraint("model_id", "number", name=op.f("uq_decision_versions_model_id")),
    )
    op.create_index(
        op.f("ix_decision_versions_model_id"), "decision_versions", ["model_id"], unique=False
    )
    op.create_table(
        "decision_provisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("decision_id", sa.String(200), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["decision_versions.id"],
            name=op.f("fk_decision_provisions_version_id_decision_versions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["decision_models.id"],
            name=op.f("fk_decision_provisions_model_id_decision_models"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_decision_provisions")),
        sa.UniqueConstraint(
            "version_id", "decision_id", name=op.f("uq_decision_provisions_version_id")
        ),
    )
    for column in ("version_id", "model_id", "decision_id"):
        op.create_index(
            op.f(f"ix_decision_provisions_{column}"),
            "decision_provisions",
            [column],
            unique=False,
        )


def downgrade() -> None:
    for column in ("version_id", "model_id", "decision_id"):
        op.drop_index(op.f(f"ix_decision_provisions_{column}"), table_name="decision_provisions")
    op.drop_table("decision_provisions")
    op.drop_index(op.f("ix_decision_versions_model_id"), table_name="decision_versions")
    op.drop_table("decision_versions")
    op.drop_index(op.f("ix_decision_models_updated_at"), table_name="decision_models")
    op.drop_index(op.f("ix_decision_models_partition_id"), table_name="decision_models")
    op.drop_table("decision_models")
