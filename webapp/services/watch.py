"""Whether an instance can change without anyone on its page doing something: how live pages poll.

It can while a worker or the outside world has something to deliver: a pending job (a tool call,
its retry, or a timer, however far off) or a message it waits for (sent through the API by
another system), or while an instance one of its call activities started can (the child's end
resumes the caller). It cannot while every live token waits on a person (a user task, or a join
whose other branches wait on people) or it failed with nothing pending: then pages check slowly
for the person who completes the task elsewhere. A completed or cancelled instance never changes.
"""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.orm import aliased

from webapp.extensions import db
from webapp.models import Instance, Job, MessageSubscription, Token
from webapp.models.statuses import FINISHED_INSTANCE, InstanceStatus, JobStatus, TokenStatus


def live_mode(instance: Instance) -> str:
    """ "fast" while it can change by itself, "slow" while it waits on people, "off" once ended."""
    if instance.status in FINISHED_INSTANCE:
        return "off"
    moving = exists().where(Token.instance_id == instance.id, Token.status == TokenStatus.ACTIVE)
    pending = exists().where(Job.instance_id == instance.id, Job.status == JobStatus.PENDING)
    message = exists().where(MessageSubscription.instance_id == instance.id)
    if db.session.scalar(select(moving | pending | message)):
        return "fast"
    if _child_moving(instance.id):
        return "fast"
    return "slow"


def _child_moving(instance_id: int, levels: int = 16) -> bool:
    """Whether a running instance called by this one (or further down) can change by itself."""
    frontier = [instance_id]
    for _ in range(levels):
        children = list(
            db.session.scalars(
                select(Instance.id).where(
                    Instance.parent_id.in_(frontier), Instance.status == InstanceStatus.RUNNING
                )
            )
        )
        if not children:
            return False
        child = aliased(Instance)
        moving = exists().where(Token.instance_id == child.id, Token.status == TokenStatus.ACTIVE)
        pending = exists().where(Job.instance_id == child.id, Job.status == JobStatus.PENDING)
        message = exists().where(MessageSubscription.instance_id == child.id)
        found = db.session.scalar(
            select(child.id).where(child.id.in_(children), moving | pending | message).limit(1)
        )
        if found is not None:
            return True
        frontier = children
    return False
