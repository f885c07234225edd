"""RQ's bookkeeping for engine deliveries: a worker leaves no job, result or execution record
behind, while any other job (a bulk operation keeps its result) goes RQ's own way."""

from __future__ import annotations

from rq import Queue
from rq.job import Job as RQJob

from tests.helpers.documents import sample_document
from tests.helpers.instances import load, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import run_burst


def test_a_worker_deletes_what_rq_kept_of_engine_deliveries_and_keeps_other_results(
    engine, app_config, redis_client
):
    version = publish_document(sample_document())
    instances = [start(engine, version, input={"amount": 500}) for _ in range(3)]
    queue = Queue(app_config["RQ_QUEUE"], connection=redis_client)
    other = queue.enqueue_call("os.getpid", job_id="not-the-engine", result_ttl=600)
    done = run_burst(app_config)
    assert all(load(engine, i).status == "completed" for i in instances)
    assert redis_client.keys("rq:job:flowdesk-*") == []
    assert redis_client.keys("rq:execution:*") == []
    assert redis_client.zcard(queue.started_job_registry.key) == 0
    assert redis_client.llen(queue.intermediate_queue_key) == 0
    kept = RQJob.fetch(other.id, connection=redis_client)
    assert kept.get_status() == "finished"
    assert isinstance(kept.return_value(), int)
    # The worker counted every delivery it ran (the health page shows the count).
    # The worker's record outlives it by a minute.
    [worker] = [k for k in redis_client.keys("rq:worker:*") if not k.endswith(b":executions")]
    assert int(redis_client.hget(worker, "successful_job_count")) == 4, done.stderr[-2000:]
