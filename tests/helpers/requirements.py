"""What some tests need from outside the repository (the BPMN corpus, bpmn-moddle, Chromium):
a missing one skips them, or fails them when FLOWDESK_REQUIRE_CORPUS=1 (a run that must prove the
corpus, the browser and bpmn-moddle were all there)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

from tests.helpers import corpus

REQUIRE = "FLOWDESK_REQUIRE_CORPUS"
NO_CORPUS_REASON = (
    "BPMN corpus not found: set FLOWDESK_BPMN_CORPUS or put shared/bpmn-corpus beside the repo"
)
NO_MODDLE_REASON = "node and node_modules/bpmn-moddle are needed (make setup-test)"


def required() -> bool:
    """Whether a missing corpus, browser or bpmn-moddle fails the run instead of skipping."""
    return os.environ.get(REQUIRE) == "1"


def missing(reason: str) -> NoReturn:
    """Skip the current test for `reason`, or fail it when FLOWDESK_REQUIRE_CORPUS=1."""
    if required():
        pytest.fail(f"{reason} ({REQUIRE}=1)", pytrace=False)
    pytest.skip(reason)


def needs_corpus() -> Path:
    """The corpus, or skip (fail when required) the current test."""
    found = corpus.corpus_dir()
    if found is None:
        missing(NO_CORPUS_REASON)
    return found


def moddle_node() -> str:
    """The node binary for tests that read files with bpmn-moddle, or skip (fail when required)."""
    node = shutil.which("node")
    if node is None or not (corpus.REPO / "node_modules/bpmn-moddle").is_dir():
        missing(NO_MODDLE_REASON)
    return node
