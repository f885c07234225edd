"""runtime: instances, tokens, jobs, message subscriptions, tasks, history, outbox

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02 18:54:06.800936

"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

# revision identifiers, used by Alembic.
revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('instances',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('version_id', sa.Integer(), nullable=False),
    sa.Column('process_key', sa.String(length=100), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('partition_id', sa.Integer(), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('input', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('vars', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('nodes', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('business_key', sa.String(length=200), nullable=True),
    sa.Column('started_via', sa.String(length=16), nullable=False),
    sa.Column('started_by_id', sa.Integer(), nullable=True),
    sa.Column('error', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['partition_id'], ['partitions.id'], name=op.f('fk_instances_partition_id_partitions'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['started_by_id'], ['users.id'], name=op.f('fk_instances_started_by_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['version_id'], ['process_versions.id'], name=op.f('fk_instances_version_id_process_versions'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_instances'))
    )
    with op.batch_alter_table('instances', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_instances_business_key'), ['business_key'], unique=False)
        batch_op.create_index(batch_op.f('ix_instances_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_instances_partition_id'), ['partition_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_instances_process_key'), ['process_key'], unique=False)
        batch_op.create_index(batch_op.f('ix_instances_status'), ['status'], unique=False)
        batch_op.create_index(batch_op.f('ix_instances_version_id'), ['version_id'], unique=False)

    op.create_table('history',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('instance_id', sa.Integer(), nullable=False),
    sa.Column('token_id', sa.Integer(), nullable=True),
    sa.Column('node_id', sa.String(length=255), nullable=True),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('actor', sa.String(length=64), nullable=True),
    sa.Column('details', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['instance_id'], ['instances.id'], name=op.f('fk_history_instance_id_instances'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_history'))
    )
    with op.batch_alter_table('history', schema=None) as batch_op:
        batch_op.create_index('ix_history_instance_id_id', ['instance_id', 'id'], unique=False)

    op.create_table('outbox',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=300), nullable=False),
    sa.Column('instance_id', sa.Integer(), nullable=True),
    sa.Column('recipients', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('subject', sa.String(length=500), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['instance_id'], ['instances.id'], name=op.f('fk_outbox_instance_id_instances'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_outbox')),
    sa.UniqueConstraint('key', name=op.f('uq_outbox_key'))
    )
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_outbox_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_outbox_instance_id'), ['instance_id'], unique=False)

    op.create_table('tokens',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('instance_id', sa.Integer(), nullable=False),
    sa.Column('node_id', sa.String(length=255), nullable=False),
    sa.Column('arrived_via', sa.String(length=255), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('step', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['instance_id'], ['instances.id'], name=op.f('fk_tokens_instance_id_instances'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tokens'))
    )
    with op.batch_alter_table('tokens', schema=None) as batch_op:
        batch_op.create_index('ix_tokens_instance_id_status', ['instance_id', 'status'], unique=False)

    op.create_table('jobs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('instance_id', sa.Integer(), nullable=False),
    sa.Column('token_id', sa.Integer(), nullable=False),
    sa.Column('node_id', sa.String(length=255), nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('key', sa.String(length=300), nullable=False),
    sa.Column('tool', sa.String(length=200), nullable=True),
    sa.Column('inputs', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('actor', sa.String(length=64), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('due_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('max_attempts', sa.Integer(), nullable=False),
    sa.Column('backoff', sa.Float(), nullable=False),
    sa.Column('timeout', sa.Float(), nullable=False),
    sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_error', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['instance_id'], ['instances.id'], name=op.f('fk_jobs_instance_id_instances'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['token_id'], ['tokens.id'], name=op.f('fk_jobs_token_id_tokens'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_jobs')),
    sa.UniqueConstraint('key', name=op.f('uq_jobs_key'))
    )
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_jobs_instance_id'), ['instance_id'], unique=False)
        batch_op.create_index('ix_jobs_status_due_at', ['status', 'due_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_jobs_token_id'), ['token_id'], unique=False)

    op.create_table('message_subscriptions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('instance_id', sa.Integer(), nullable=False),
    sa.Column('token_id', sa.Integer(), nullable=False),
    sa.Column('node_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('correlation_key', sa.String(length=500), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['instance_id'], ['instances.id'], name=op.f('fk_message_subscriptions_instance_id_instances'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['token_id'], ['tokens.id'], name=op.f('fk_message_subscriptions_token_id_tokens'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_message_subscriptions'))
    )
    with op.batch_alter_table('message_subscriptions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_message_subscriptions_instance_id'), ['instance_id'], unique=False)
        batch_op.create_index('ix_message_subscriptions_name_key', ['name', 'correlation_key'], unique=False)
        batch_op.create_index(batch_op.f('ix_message_subscriptions_token_id'), ['token_id'], unique=False)

    op.create_table('tasks',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('instance_id', sa.Integer(), nullable=False),
    sa.Column('token_id', sa.Integer(), nullable=False),
    sa.Column('node_id', sa.String(length=255), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('partition_id', sa.Integer(), nullable=True),
    sa.Column('assignee_id', sa.Integer(), nullable=True),
    sa.Column('candidate_role_id', sa.Integer(), nullable=True),
    sa.Column('form', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('due_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('completed_by_id', sa.Integer(), nullable=True),
    sa.Column('completed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('result', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['assignee_id'], ['users.id'], name=op.f('fk_tasks_assignee_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['candidate_role_id'], ['roles.id'], name=op.f('fk_tasks_candidate_role_id_roles'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['completed_by_id'], ['users.id'], name=op.f('fk_tasks_completed_by_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['instance_id'], ['instances.id'], name=op.f('fk_tasks_instance_id_instances'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['partition_id'], ['partitions.id'], name=op.f('fk_tasks_partition_id_partitions'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['token_id'], ['tokens.id'], name=op.f('fk_tasks_token_id_tokens'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tasks'))
    )
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_tasks_assignee_id'), ['assignee_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_tasks_candidate_role_id'), ['candidate_role_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_tasks_instance_id'), ['instance_id'], unique=False)
        batch_op.create_index('ix_tasks_status_partition_id', ['status', 'partition_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_tasks_token_id'), ['token_id'], unique=False)



def downgrade():
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_tasks_token_id'))
        batch_op.drop_index('ix_tasks_status_partition_id')
        batch_op.drop_index(batch_op.f('ix_tasks_instance_id'))
        batch_op.drop_index(batch_op.f('ix_tasks_candidate_role_id'))
        batch_op.drop_index(batch_op.f('ix_tasks_assignee_id'))

    op.drop_table('tasks')
    with op.batch_alter_table('message_subscriptions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_message_subscriptions_token_id'))
        batch_op.drop_index('ix_message_subscriptions_name_key')
        batch_op.drop_index(batch_op.f('ix_message_subscriptions_instance_id'))

    op.drop_table('message_subscriptions')
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_jobs_token_id'))
        batch_op.drop_index('ix_jobs_status_due_at')
        batch_op.drop_index(batch_op.f('ix_jobs_instance_id'))

    op.drop_table('jobs')
    with op.batch_alter_table('tokens', schema=None) as batch_op:
        batch_op.drop_index('ix_tokens_instance_id_status')

    op.drop_table('tokens')
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_outbox_instance_id'))
        batch_op.drop_index(batch_op.f('ix_outbox_created_at'))

    op.drop_table('outbox')
    with op.batch_alter_table('history', schema=None) as batch_op:
        batch_op.drop_index('ix_history_instance_id_id')

    op.drop_table('history')
    with op.batch_alter_table('instances', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_instances_version_id'))
        batch_op.drop_index(batch_op.f('ix_instances_status'))
        batch_op.drop_index(batch_op.f('ix_instances_process_key'))
        batch_op.drop_index(batch_op.f('ix_instances_partition_id'))
        batch_op.drop_index(batch_op.f('ix_instances_created_at'))
        batch_op.drop_index(batch_op.f('ix_instances_business_key'))

    op.drop_table('instances')
