"""gunicorn reads this file from its working directory (the checkout, as the web unit in
docs/deploy.md runs it): the master checks the settings once before it forks any worker, so a
wrong setting (PostgreSQL refusing DATABASE_URL included) ends gunicorn with one line, not a
traceback from each worker that failed to boot."""

import sys

from webapp import create_app
from webapp.config import ConfigError


def on_starting(_server) -> None:
    try:
        create_app()
    except ConfigError as error:
        print(f"App failed to load: {error}", file=sys.stderr)
        sys.exit(4)
