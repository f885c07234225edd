"""Where the shared BPMN corpus and the bpmn-moddle reader are, from any checkout or worktree.

A missing one skips the tests that need it, or fails them when FLOWDESK_REQUIRE_CORPUS=1 (for a
run that must prove the corpus, the browser and bpmn-moddle were all there).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parents[1]
REQUIRE = "FLOWDESK_REQUIRE_CORPUS"
LAST_RESORT = Path("/work/shared/bpmn-corpus")
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


def main_checkout(repo: Path) -> Path | None:
    """For a git worktree (`.git` is a file), the checkout holding the common git dir."""
    dot_git = repo / ".git"
    if not dot_git.is_file():
        return None
    text = dot_git.read_text(encoding="utf-8").strip()
    if not text.startswith("gitdir:"):
        return None
    git_dir = (repo / text.removeprefix("gitdir:").strip()).resolve()
    common = git_dir
    if (git_dir / "commondir").is_file():
        pointer = (git_dir / "commondir").read_text(encoding="utf-8").strip()
        common = (git_dir / pointer).resolve()
    return common.parent


def candidates(repo: Path | None = None, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where the corpus may be, in order: FLOWDESK_BPMN_CORPUS, beside the repository root,
    beside the main checkout of a worktree, then /work/shared."""
    repo = repo or REPO
    environ = os.environ if environ is None else environ
    found = [Path(environ["FLOWDESK_BPMN_CORPUS"])] if environ.get("FLOWDESK_BPMN_CORPUS") else []
    found += [repo.parent / "shared/bpmn-corpus", repo.parent.parent / "shared/bpmn-corpus"]
    main = main_checkout(repo)
    if main is not None:
        found += [main.parent / "shared/bpmn-corpus", main.parent.parent / "shared/bpmn-corpus"]
    found.append(LAST_RESORT)
    return found


def corpus_dir(repo: Path | None = None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The first candidate holding a MANIFEST.md, or None."""
    return next((c for c in candidates(repo, environ) if (c / "MANIFEST.md").is_file()), None)


def needs_corpus() -> Path:
    """The corpus, or skip (fail when required) the current test."""
    found = corpus_dir()
    if found is None:
        missing(NO_CORPUS_REASON)
    return found


def moddle_node() -> str:
    """The node binary for tests that read files with bpmn-moddle, or skip (fail when required)."""
    node = shutil.which("node")
    if node is None or not (REPO / "node_modules/bpmn-moddle").is_dir():
        missing(NO_MODDLE_REASON)
    return node
