"""Run a Flowdesk worker: `python worker.py` (add `--burst` to drain the queue and exit).

Start as many as the load needs, on as many machines, given the same DATABASE_URL and REDIS_URL.
"""

from __future__ import annotations

import argparse
import logging
import sys

from webapp import create_app
from webapp.config import ConfigError
from webapp.worker.runner import run

EMBEDDED_REDIS_WARNING = (
    "REDIS_URL is not set: this worker uses the embedded Redis under %s, which only processes "
    "on this machine share. In production set FLOWDESK_ENV=production, REDIS_URL, DATABASE_URL "
    "and SECRET_KEY (the same on every web and worker process)."
)


def main(argv: list[str] | None = None, config: dict | None = None) -> None:
    """Start a worker; `config` overrides settings as in `create_app` (for tests)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--burst", action="store_true", help="drain the queue, then exit")
    args = parser.parse_args(argv)
    try:
        app = create_app(config)
    except ConfigError as error:
        sys.exit(f"worker not started: {error}")
    if not app.config.get("REDIS_URL"):
        logging.getLogger("flowdesk.worker").warning(EMBEDDED_REDIS_WARNING, app.instance_path)
    run(app, burst=args.burst)


if __name__ == "__main__":
    main()
