"""RQ's scheduler, kept alive through Redis outages and stopped with its worker."""

from __future__ import annotations

import os
import threading
import time

from rq.scheduler import RQScheduler

from webapp.worker.outages import REDIS_DOWN, pauses, sleep_unless


class AppScheduler(RQScheduler):
    """RQ's scheduler process (it moves delayed jobs to the queue when due), kept alive through
    Redis outages: RQ's exits on the first one and is restarted only by the worker's ten-minute
    maintenance, leaving timers and retries to the sweep meanwhile. It also stops when its worker
    is gone, even killed with SIGKILL, instead of holding the scheduler lock as an orphan."""

    worker_pid = 0

    def work(self) -> None:
        if self.worker_pid:
            threading.Thread(target=self._watch_worker, name="worker-watch", daemon=True).start()
        waits = pauses()
        while True:
            try:
                super().work()
                return
            except REDIS_DOWN as error:
                if self._stop_requested:
                    return
                pause = next(waits)
                self.log.warning("Scheduler lost Redis (%s); trying again in %.0f s", error, pause)
                sleep_unless(lambda: self._stop_requested, pause)

    def _watch_worker(self) -> None:
        """Once the worker is no longer this process's parent, stop as on SIGTERM."""
        while not self._stop_requested:
            if os.getppid() != self.worker_pid:
                self.log.warning(
                    "Scheduler: its worker (PID %s) is gone; stopping", self.worker_pid
                )
                self._stop_requested = True
                return
            time.sleep(0.5)
