"""Command-line tools (`flask --app webapp <command>`): users, demo data and the dev server."""
