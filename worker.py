"""Run a Flowdesk worker: `python worker.py` (add `--burst` to drain the queue and exit).

Start as many as the load needs, on as many machines, given the same DATABASE_URL and REDIS_URL.
"""

from __future__ import annotations

import argparse

from webapp import create_app
from webapp.worker import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--burst", action="store_true", help="drain the queue, then exit")
    args = parser.parse_args()
    app = create_app()
    run(app, burst=args.burst)


if __name__ == "__main__":
    main()
