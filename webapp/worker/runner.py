"""The RQ worker: jobs run inside the Flask app context with a fresh database session each.

Each worker also runs the clock thread, which enqueues jobs whose time came
(webapp/worker/clock.py), the sweep thread (webapp/worker/sweeper.py) and the thread that sends
webhook deliveries (webapp/worker/webhooks.py); RQ's scheduler process
is not started, since nothing is scheduled in RQ. A worker outlives Redis
outages: RQ quits on a dropped connection anywhere but in its wait for the next job, so each step
of RQ's loop here logs the outage, waits for Redis with growing pauses and carries on. RQ's record
of a job in hand is then abandoned; the database holds the job's truth, and the sweep delivers
again whatever did not run.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from flask import Flask
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq import SimpleWorker, worker_registration
from rq.executions import Execution
from rq.job import Job as RQJob
from rq.logutils import setup_loghandlers
from rq.queue import Queue
from rq.registry import StartedJobRegistry
from rq.utils import now as rq_now
from rq.worker import WorkerStatus

from webapp.engine import dispatch
from webapp.extensions import db
from webapp.infra import logs
from webapp.infra.database import WORKER_PING_AFTER_IDLE
from webapp.infra.queue import get_queue, redis_connection
from webapp.worker.clock import Clock
from webapp.worker.outages import MAX_REDIS_WAIT, REDIS_DOWN, wait_for_redis
from webapp.worker.sweeper import Sweeper
from webapp.worker.webhooks import WebhookSender

log = logging.getLogger(__name__)


class AppWorker(SimpleWorker):
    """Runs each job in the worker process itself (no fork), inside an app context.

    No fork keeps the per-job cost low; a job that crashes the process is recovered by the
    engine's sweep, which re-enqueues work whose lease expired.
    """

    app: Flask
    clock: Clock | None = None
    sweeper: Sweeper | None = None
    webhooks: WebhookSender | None = None
    max_connection_wait_time = MAX_REDIS_WAIT  # the ceiling of RQ's own retries while dequeuing
    _last_beat = 0.0
    _last_suspension_check = 0.0
    _state_saved = True

    # RQ's bookkeeping costs several Redis round trips per job; the three overrides below drop
    # the ones that repeat what was just written, which matters at hundreds of jobs a second.

    def set_state(self, state: str, pipeline: Any = None) -> None:
        """Write the worker's state only when it changes (RQ sets 'idle' twice per job)."""
        if pipeline is None and state == getattr(self, "_state", None) and self._state_saved:
            return
        self._state_saved = False
        super().set_state(state, pipeline)
        self._state_saved = True

    def check_for_suspension(self, burst: bool) -> None:
        """`rq suspend` is noticed within a second instead of before every job."""
        if time.monotonic() - self._last_suspension_check < 1.0:
            return
        self._last_suspension_check = time.monotonic()
        try:
            super().check_for_suspension(burst)
        except REDIS_DOWN as error:
            self._lost_redis("checking for `rq suspend`", error)

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        """One beat a second, in one round trip, keeps the worker's key alive just as well; it
        also notices when Redis came back without this worker's record, and writes it again."""
        if pipeline is not None or timeout is not None:
            super().heartbeat(timeout, pipeline)
            return
        if time.monotonic() - self._last_beat < 1.0:
            return
        self._last_beat = time.monotonic()
        try:
            with self.connection.pipeline() as beat:
                beat.hexists(self.key, "birth")
                super().heartbeat(None, beat)
                registered = beat.execute()[0]
            if not registered:
                self._register_again()
        except REDIS_DOWN as error:  # the next Redis call in RQ's loop waits for it
            self.log.debug("Worker %s: no heartbeat, Redis unavailable: %s", self.name, error)

    # RQ spends about nine round trips on each job. For the engine's own deliveries (enqueued
    # with result_ttl 0, never with dependents, repeats, groups or rate limits) the overrides
    # below take four: take the job (LMOVE), read it (HGETALL), mark it started (one MULTI with
    # the execution record), and clean up after it (one MULTI, deleting the job: the sweep reads
    # a missing record as "no delivery under way", as it reads "finished"). Any other job (a bulk
    # operation keeps its result) goes RQ's own way.
    _prepared: str | None = None

    def prepare_execution(self, job: RQJob) -> Execution:
        """Write the execution record and mark the job started in one round trip (RQ: two)."""
        if not _lean(job):
            return super().prepare_execution(job)
        with self.connection.pipeline() as pipeline:
            ttl = self.get_heartbeat_ttl(job)
            execution = Execution.create(job, ttl, pipeline=pipeline, worker_name=self.name)
            self.executions[execution.id] = execution
            self.set_state(WorkerStatus.BUSY, pipeline=pipeline)
            super().heartbeat(ttl, pipeline)
            job.prepare_for_execution(self.name, pipeline=pipeline)
            pipeline.persist(job.key)
            if len(self.queues) == 1:
                pipeline.lrem(self.queues[0].intermediate_queue_key, 1, job.id)
            pipeline.execute()
        self._prepared = job.id
        return execution

    def prepare_job_execution(
        self, job: RQJob, remove_from_intermediate_queue: bool = False
    ) -> None:
        if self._prepared == job.id:  # done in prepare_execution
            self._prepared = None
            return
        super().prepare_job_execution(job, remove_from_intermediate_queue)

    def handle_execution_ended(self, job: RQJob, queue: Queue, heartbeat_ttl: int) -> None:
        """No last heartbeat for an engine job: its clean-up follows at once."""
        if not _lean(job):
            super().handle_execution_ended(job, queue, heartbeat_ttl)
            return
        job.ended_at = rq_now()

    def handle_job_success(
        self, job: RQJob, queue: Queue, started_job_registry: StartedJobRegistry, execution: Any
    ) -> None:
        """One MULTI: the worker's counters, the execution's removal, the job's deletion and the
        worker's state (RQ: a WATCH on dependents and three more round trips)."""
        if not _lean(job):
            super().handle_job_success(job, queue, started_job_registry, execution)
            return
        with self.connection.pipeline() as pipeline:
            self.increment_successful_job_count(pipeline=pipeline)
            if job.started_at is not None and job.ended_at is not None:
                self.increment_total_working_time(job.ended_at - job.started_at, pipeline)
            self.cleanup_execution(job, pipeline=pipeline, execution=execution)
            pipeline.delete(job.key, job.dependents_key, job.dependencies_key)
            self.set_state(WorkerStatus.IDLE, pipeline=pipeline)
            pipeline.execute()

    def run_maintenance_tasks(self) -> None:
        try:
            super().run_maintenance_tasks()
        except REDIS_DOWN as error:
            self._lost_redis("cleaning RQ's registries", error)

    def dequeue_job_and_maintain_ttl(
        self, timeout: int | None, max_idle_time: int | None = None
    ) -> tuple[RQJob, Queue] | None:
        """RQ retries a dropped connection while it waits for a job, but not while it marks
        the worker idle first."""
        while True:
            try:
                return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
            except REDIS_DOWN as error:
                self._lost_redis("waiting for a job", error)
                self._wait_for_redis()

    def execute_job(self, job: RQJob, queue: Queue) -> None:
        """Run the job; when Redis drops on the way, leave RQ's record of it as it is and wait
        for Redis. What the job wrote to the database stands; if it did not get to run, its row
        is still pending and the sweep sends it again."""
        try:
            with logs.about(**_about(job)):
                super().execute_job(job, queue)
        except REDIS_DOWN as error:
            self._lost_redis(f"handling job {job.id}", error)
            self.execution = None
            self._state, self._state_saved = WorkerStatus.IDLE, False
            self._wait_for_redis()

    def perform_job(self, *args: Any, **kwargs: Any) -> Any:
        with self.app.app_context():
            try:
                return super().perform_job(*args, **kwargs)
            finally:
                db.session.remove()

    def bootstrap(self, *args: Any, **kwargs: Any) -> None:
        """RQ's start-up writes the worker's record and state; when Redis drops meanwhile, wait
        for it and carry on (the heartbeat writes a missing record again)."""
        try:
            super().bootstrap(*args, **kwargs)
        except REDIS_DOWN as error:
            self._lost_redis("starting", error)
            self._state_saved = False
            self._wait_for_redis()

    def work(self, burst: bool = False, *args: Any, **kwargs: Any) -> bool:
        """Enqueue the due timers and sweep once before working (so `--burst` also runs them and
        recovers lost jobs), then periodically; a worker started during an outage waits for
        Redis first."""
        self._wait_for_redis()
        self.clock = Clock(self.app)
        self.sweeper = Sweeper(self.app)
        self.clock.tick()  # before the sweep, which would send the due timers a second time
        self.sweeper.sweep_once(grace=0)
        self.sweeper.start_schedules()
        self.webhooks = WebhookSender(self.app)
        if not burst:
            self.clock.start()
            self.sweeper.start()
            self.webhooks.start()
        try:
            return super().work(burst, *args, **kwargs)
        finally:
            self.clock.stop()
            self.sweeper.stop()
            self.webhooks.stop()

    def set_shutdown_requested_date(self) -> None:
        """Called by the SIGTERM handler, in the middle of a job: an outage raised there would
        surface in the tool call as its own failure."""
        try:
            super().set_shutdown_requested_date()
        except REDIS_DOWN as error:
            self._lost_redis("noting the shutdown request", error)

    def teardown(self) -> None:
        """Leaving during an outage: the worker's key expires in Redis on its own."""
        try:
            super().teardown()
        except REDIS_DOWN as error:
            self.log.warning(
                "Worker %s: could not sign off, Redis unavailable: %s", self.name, error
            )

    def _pubsub_exception_handler(self, exc: Exception, pubsub: Any, pubsub_thread: Any) -> None:
        """RQ retries a dropped connection of the thread that receives `rq` commands, but a
        timeout ends that thread; retry after both."""
        if isinstance(exc, RedisTimeoutError):
            exc = RedisConnectionError(str(exc))
        super()._pubsub_exception_handler(exc, pubsub, pubsub_thread)

    def _lost_redis(self, doing: str, error: Exception) -> None:
        self.log.warning("Worker %s: lost Redis while %s: %s", self.name, doing, error)

    def _wait_for_redis(self) -> None:
        wait_for_redis(self.connection, f"Worker {self.name}", lambda: self._stop_requested)

    def _register_again(self) -> None:
        """Redis came back without this worker's record (it restarted empty): write it as RQ
        does at start, so the health page and `rq info` list the worker again."""
        with self.connection.pipeline() as pipe:
            pipe.hset(self.key, mapping={**self.serialize(), "state": self.get_state()})
            worker_registration.register(self, pipe)
            pipe.expire(self.key, self.worker_ttl + 60)
            pipe.execute()
        self._state_saved = True
        self.log.info("Worker %s: registered again after Redis lost its record", self.name)


def _about(job: RQJob) -> dict[str, Any]:
    """The instance and job an engine delivery is about (its arguments), for its log lines."""
    return dispatch.delivery_about(job.id, tuple(job.args))


def _lean(job: RQJob) -> bool:
    """An engine delivery: keeps no result, has no dependents, repeats, group or rate limit."""
    return (
        job.id.startswith("flowdesk-")
        and job.result_ttl == 0
        and not job.repeats_left
        and not job.group_id
        and not job.has_rate_limit
    )


def build_worker(app: Flask, name: str | None = None) -> AppWorker:
    """A worker for the app's queue, connected to the app's Redis."""
    worker = AppWorker([get_queue(app)], connection=redis_connection(app), name=name)
    worker.app = app
    return worker


def run(app: Flask, *, burst: bool = False) -> bool:
    """Work until stopped (or, with burst, until the queue is empty); a worker started while
    Redis is down waits for it. Flowdesk's own lines (the sweep, outages) share RQ's handler
    where `webapp.infra.logs` installed none (under a test runner)."""
    if not logs.configured():
        setup_loghandlers(app.config["LOG_LEVEL"], name="webapp")
    wait_for_redis(redis_connection(app))
    app.config.setdefault("DB_PING_AFTER_IDLE", WORKER_PING_AFTER_IDLE)
    worker = build_worker(app)
    return worker.work(burst=burst, with_scheduler=False, logging_level="INFO")
