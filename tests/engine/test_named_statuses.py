"""The engine writes and compares statuses and history kinds as the enums of models/statuses.py,
never as bare text, so a misspelt status fails at import or in mypy instead of matching nothing."""

import ast
from pathlib import Path

import webapp.engine

ENGINE = Path(webapp.engine.__file__).parent


def _text(node: ast.AST | None) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_text(element) for element in node.elts)
    return False


def _is_status(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "status"


def _bare(tree: ast.AST) -> list[int]:
    """Lines where a status is set or compared, or a history entry added, with bare text."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(_is_status(t) for t in node.targets):
            if _text(node.value):
                found.append(node.lineno)
        elif isinstance(node, ast.Compare) and _is_status(node.left):
            if any(_text(c) for c in node.comparators):
                found.append(node.lineno)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "status" and _text(value):
                    found.append(node.lineno)
        elif isinstance(node, ast.Call):
            func = node.func
            if any(k.arg == "status" and _text(k.value) for k in node.keywords):
                found.append(node.lineno)
            narrowed = isinstance(func, ast.Attribute) and func.attr == "in_"
            if narrowed and _is_status(func.value) and any(_text(a) for a in node.args):
                found.append(node.lineno)
            named = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if named in ("add", "append", "report_to_parent") and node.args:
                owner = func.value if isinstance(func, ast.Attribute) else None
                about_history = named == "report_to_parent" or (
                    isinstance(owner, ast.Attribute | ast.Name)
                    and getattr(owner, "attr", getattr(owner, "id", "")) == "history"
                )
                if about_history and _text(node.args[0]):
                    found.append(node.lineno)
    return found


def test_engine_names_every_status_and_history_kind_by_its_enum():
    bare = {
        path.name: lines
        for path in sorted(ENGINE.glob("*.py"))
        if (lines := _bare(ast.parse(path.read_text(), str(path))))
    }
    assert bare == {}


def test_the_check_sees_bare_text():
    source = (
        'token.status = "done"\n'
        'if job.status != "pending": pass\n'
        'q.where(TASKS.c.status.in_(("open",)))\n'
        'step.history.add("left", token)\n'
        'step.report_to_parent("error")\n'
        'update(JOBS).values(status="done")\n'
        'row = {"status": "pending"}\n'
    )
    assert sorted(_bare(ast.parse(source))) == [1, 2, 3, 4, 5, 6, 7]
