"""Whether an instance can change without anyone on its page doing something: how live pages poll.

It can while a worker or the outside world has something to deliver: a pending job (a tool call,
its retry, or a timer, however far off) or a message it waits for (sent through the API by
another system). It cannot while every live token waits on a person (a user task, or a join whose
other branches wait on people) or it failed with nothing pending: then pages check slowly for the
person who completes the task elsewhere. A completed or cancelled instance never changes.
"""

from __future__ import annotations

from sqlalchemy import exists, select

from webapp.extensions import db
from webapp.models import Instance, Job, MessageSubscription, Token

ENDED = ("completed", "cancelled")


def live_mode(instance: Instance) -> str:
    """ "fast" while it can change by itself, "slow" while it waits on people, "off" once ended."""
    if instance.status in ENDED:
        return "off"
    moving = exists().where(Token.instance_id == instance.id, Token.status == "active")
    pending = exists().where(Job.instance_id == instance.id, Job.status == "pending")
    message = exists().where(MessageSubscription.instance_id == instance.id)
    if db.session.scalar(select(moving | pending | message)):
        return "fast"
    return "slow"
