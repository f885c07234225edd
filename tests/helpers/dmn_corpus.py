"""Where the shared DMN corpus is, from any clone or worktree, and its files.

Like tests/helpers/corpus.py for BPMN: FLOWDESK_DMN_CORPUS (relative to the repository root),
`shared/dmn-corpus` beside the checkout or beside the main checkout of a worktree, then
/work/shared/dmn-corpus. Tests skip without it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.helpers.corpus import REPO, main_checkout

ENV = "FLOWDESK_DMN_CORPUS"
LAST_RESORT = Path("/work/shared/dmn-corpus")


def candidates(repo: Path | None = None, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where the DMN corpus may be, in the order they are tried."""
    repo = repo or REPO
    environ = os.environ if environ is None else environ
    found = [repo / environ[ENV]] if environ.get(ENV) else []
    found += [repo.parent / "shared/dmn-corpus", repo.parent.parent / "shared/dmn-corpus"]
    main = main_checkout(repo)
    if main is not None:
        found += [main.parent / "shared/dmn-corpus", main.parent.parent / "shared/dmn-corpus"]
    found.append(LAST_RESORT)
    return found


def dmn_corpus_dir(
    repo: Path | None = None, environ: Mapping[str, str] | None = None
) -> Path | None:
    """The first candidate holding a MANIFEST.md, or None."""
    return next((c for c in candidates(repo, environ) if (c / "MANIFEST.md").is_file()), None)


def dmn_files() -> list[Path]:
    """Every .dmn file of the corpus (sorted), or [] without a corpus."""
    folder = dmn_corpus_dir()
    return sorted(folder.rglob("*.dmn")) if folder else []


def dmn_file(name: str) -> bytes:
    """One corpus file's bytes by its path under the corpus folder; skips the test without it."""
    folder = dmn_corpus_dir()
    if folder is None or not (folder / name).is_file():
        pytest.skip(f"DMN corpus file {name} not found (set {ENV})")
    return (folder / name).read_bytes()


def corpus_ids(paths: list[Path]) -> list[str]:
    folder = dmn_corpus_dir()
    return [str(path.relative_to(folder)) if folder else path.name for path in paths]
