"""processes and versions

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02 18:47:43.624369

"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

# revision identifiers, used by Alembic.
revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('processes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=100), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('partition_id', sa.Integer(), nullable=True),
    sa.Column('draft_xml', sa.Text(), nullable=True),
    sa.Column('draft_document', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('draft_hash', sa.String(length=64), nullable=True),
    sa.Column('draft_revision', sa.Integer(), nullable=False),
    sa.Column('draft_problems', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('created_by_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_by_id', sa.Integer(), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], name=op.f('fk_processes_created_by_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['partition_id'], ['partitions.id'], name=op.f('fk_processes_partition_id_partitions'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['updated_by_id'], ['users.id'], name=op.f('fk_processes_updated_by_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_processes')),
    sa.UniqueConstraint('key', name=op.f('uq_processes_key'))
    )
    with op.batch_alter_table('processes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_processes_partition_id'), ['partition_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_processes_updated_at'), ['updated_at'], unique=False)

    op.create_table('process_versions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('process_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('document', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('bpmn_xml', sa.Text(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('change_note', sa.String(length=500), nullable=False),
    sa.Column('published_by_id', sa.Integer(), nullable=True),
    sa.Column('published_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['process_id'], ['processes.id'], name=op.f('fk_process_versions_process_id_processes'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['published_by_id'], ['users.id'], name=op.f('fk_process_versions_published_by_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_process_versions')),
    sa.UniqueConstraint('process_id', 'number', name=op.f('uq_process_versions_process_id'))
    )
    with op.batch_alter_table('process_versions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_process_versions_process_id'), ['process_id'], unique=False)



def downgrade():
    with op.batch_alter_table('process_versions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_process_versions_process_id'))

    op.drop_table('process_versions')
    with op.batch_alter_table('processes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_processes_updated_at'))
        batch_op.drop_index(batch_op.f('ix_processes_partition_id'))

    op.drop_table('processes')
