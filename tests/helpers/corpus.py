"""Where the shared BPMN corpus is, from any clone or worktree: one lookup for the tests and for
.ci/run (`python3 tests/helpers/corpus.py` prints the folder, or exits 1 without one).

Standard library only, so CI can run it before the virtual environment exists.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENV = "FLOWDESK_BPMN_CORPUS"
LAST_RESORT = Path("/work/shared/bpmn-corpus")


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
    """Where the corpus may be, in order: FLOWDESK_BPMN_CORPUS (a relative one from the repository
    root), beside the repository root, beside the main checkout of a worktree, then /work/shared."""
    repo = repo or REPO
    environ = os.environ if environ is None else environ
    found = [repo / environ[ENV]] if environ.get(ENV) else []
    found += [repo.parent / "shared/bpmn-corpus", repo.parent.parent / "shared/bpmn-corpus"]
    main = main_checkout(repo)
    if main is not None:
        found += [main.parent / "shared/bpmn-corpus", main.parent.parent / "shared/bpmn-corpus"]
    found.append(LAST_RESORT)
    return found


def corpus_dir(repo: Path | None = None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The first candidate holding a MANIFEST.md, or None."""
    return next((c for c in candidates(repo, environ) if (c / "MANIFEST.md").is_file()), None)


if __name__ == "__main__":
    folder = corpus_dir()
    if folder is None:
        sys.exit(1)
    print(folder)
