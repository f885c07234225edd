"""Flowdesk: a self-hosted, Python-native process platform.

Importing the package loads nothing else, so its pure library (`webapp.process`) stays free of
Flask; `create_app` (the application factory in `webapp.app`) is loaded when first called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from flask import Flask


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the Flask app: defaults, then environment variables, then `config`."""
    from webapp.app import create_app as build

    return build(config)
