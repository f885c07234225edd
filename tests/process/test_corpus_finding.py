"""The shared corpus is found from any checkout (a clone, a worktree, FLOWDESK_BPMN_CORPUS) by one
lookup that the tests and CI share, and FLOWDESK_REQUIRE_CORPUS=1 turns a missing corpus, browser
or bpmn-moddle into a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import corpus, requirements


def _corpus_at(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "MANIFEST.md").write_text("| # | file (in corpus) | subset |\n", encoding="utf-8")
    return folder


def _worktree(tmp_path: Path) -> tuple[Path, Path]:
    """A main checkout at home/main and its worktree far from it, as `git worktree add` makes."""
    main = tmp_path / "home/main"
    admin = main / ".git/worktrees/wt"
    admin.mkdir(parents=True)
    (admin / "commondir").write_text("../..\n", encoding="utf-8")
    worktree = tmp_path / "elsewhere/deep/wt"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {admin}\n", encoding="utf-8")
    return main, worktree


def test_a_worktree_finds_the_corpus_beside_its_main_checkout(tmp_path: Path) -> None:
    main, worktree = _worktree(tmp_path)
    shared = _corpus_at(tmp_path / "home/shared/bpmn-corpus")
    assert corpus.main_checkout(worktree) == main
    assert corpus.corpus_dir(worktree, environ={}) == shared
    assert corpus.corpus_dir(main, environ={}) == shared


def test_the_environment_variable_comes_first_and_work_shared_last(tmp_path: Path) -> None:
    _, worktree = _worktree(tmp_path)
    _corpus_at(tmp_path / "home/shared/bpmn-corpus")
    chosen = _corpus_at(tmp_path / "mine")
    assert corpus.corpus_dir(worktree, {"FLOWDESK_BPMN_CORPUS": str(chosen)}) == chosen
    lone = tmp_path / "lone/repo"
    lone.mkdir(parents=True)
    assert corpus.candidates(lone, {})[-1] == Path("/work/shared/bpmn-corpus")
    assert corpus.candidates(lone, {})[0] == tmp_path / "lone/shared/bpmn-corpus"


def _outcome(call: Callable[[], object]) -> tuple[str, str]:
    """("skip" or "fail", message) of a call that must end the test."""
    try:
        call()
    except pytest.skip.Exception as skipped:
        return "skip", str(skipped)
    except pytest.fail.Exception as failed:
        return "fail", str(failed)
    raise AssertionError("the call neither skipped nor failed")


def test_a_missing_requirement_skips_unless_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(requirements.REQUIRE, raising=False)
    assert _outcome(lambda: requirements.missing("no corpus")) == ("skip", "no corpus")
    monkeypatch.setenv(requirements.REQUIRE, "1")
    assert _outcome(lambda: requirements.missing("no corpus"))[0] == "fail"
    monkeypatch.setenv("FLOWDESK_BPMN_CORPUS", "/nowhere")
    monkeypatch.setattr(corpus, "LAST_RESORT", Path("/nowhere"))
    monkeypatch.setattr(corpus, "REPO", Path("/nowhere/repo"))
    kind, message = _outcome(requirements.needs_corpus)
    assert kind == "fail" and "BPMN corpus not found" in message
    kind, message = _outcome(requirements.moddle_node)
    assert kind == "fail" and "bpmn-moddle" in message


def test_bpmn_moddle_is_a_development_dependency() -> None:
    package = json.loads((corpus.REPO / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((corpus.REPO / "package-lock.json").read_text(encoding="utf-8"))
    assert "bpmn-moddle" in package["devDependencies"]
    assert lock["packages"][""]["devDependencies"] == package["devDependencies"]
    assert "node_modules/bpmn-moddle" in lock["packages"]


def test_a_relative_environment_variable_is_read_from_the_repository_root(tmp_path: Path) -> None:
    chosen = _corpus_at(tmp_path / "repo/corpora/mine")
    found = corpus.corpus_dir(tmp_path / "repo", {"FLOWDESK_BPMN_CORPUS": "corpora/mine"})
    assert found == chosen


def _lookup_script(cwd: Path, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python3 tests/helpers/corpus.py` as .ci/run calls it, from `cwd`."""
    script = corpus.REPO / "tests/helpers/corpus.py"
    return subprocess.run(
        [sys.executable, "-I", str(script)], cwd=cwd, env=environ, capture_output=True, text=True
    )


def test_ci_finds_the_corpus_with_the_tests_lookup_from_any_directory(tmp_path: Path) -> None:
    chosen = _corpus_at(tmp_path / "mine")
    environ = {"PATH": os.environ.get("PATH", ""), "FLOWDESK_BPMN_CORPUS": str(chosen)}
    done = _lookup_script(tmp_path, environ)
    assert (done.returncode, done.stdout.strip()) == (0, str(chosen))
    environ["FLOWDESK_BPMN_CORPUS"] = str(tmp_path / "nowhere")
    expected = corpus.corpus_dir(environ={"FLOWDESK_BPMN_CORPUS": str(tmp_path / "nowhere")})
    done = _lookup_script(tmp_path, environ)
    assert done.stdout.strip() == (str(expected) if expected else "")
    assert done.returncode == (0 if expected else 1)
    ci = (corpus.REPO / ".ci/run").read_text(encoding="utf-8")
    assert "python3 tests/helpers/corpus.py" in ci
