"""Deployment procedures reuse the engine's fixtures: real worker processes and the test tools."""

from tests.engine.conftest import engine, redis_client, test_tools, workers  # noqa: F401
