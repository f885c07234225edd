"""Example rows of a decision model (inputs -> expected result): checking them, running them, and
carrying them in the DMN file under Flowdesk's extension namespace.

A row is `{"decision": id, "name": text, "inputs": {input column id: value}, "expected": value}`;
it runs with the input values given directly (`evaluate_table`), as the "try it" form does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lxml import etree

from webapp.process import dmn
from webapp.process.bpmn.model import BpmnImportError
from webapp.process.bpmn.namespaces import FLOWDESK
from webapp.process.bpmn.safe_xml import parse

MAX_BYTES = 5_000_000
_EXAMPLES = f"{{{FLOWDESK}}}examples"
_EXAMPLE = f"{{{FLOWDESK}}}example"
_INPUT = f"{{{FLOWDESK}}}input"
_EXPECTED = f"{{{FLOWDESK}}}expected"


class ExampleError(ValueError):
    """An example row that cannot be kept, naming the field that is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class ExampleResult:
    """One row run against a document: passed, or what came out instead (or the error)."""

    index: int
    row: dict[str, Any]
    passed: bool
    actual: Any = None
    matched: tuple[int, ...] = ()
    error: str | None = None

    @property
    def label(self) -> str:
        return self.row.get("name") or f"example {self.index + 1}"


def jsonable(value: Any) -> Any:
    """The value as JSON would carry it (dates as ISO text, tuples as lists)."""
    return json.loads(json.dumps(value, default=_iso))


def _iso(value: Any) -> Any:
    isoformat = getattr(value, "isoformat", None)
    return isoformat() if callable(isoformat) else str(value)


def make_row(
    document: Mapping[str, Any],
    decision_id: str,
    inputs: Mapping[str, Any],
    expected: Any,
    name: str = "",
) -> dict[str, Any]:
    """A checked row: the decision exists and every input names one of its columns."""
    if decision_id not in dmn.decision_ids(document):
        raise ExampleError("decision", f"The model has no decision '{decision_id}'.")
    columns = {column["id"] for column in dmn.input_columns(document, decision_id)}
    unknown = sorted(set(inputs) - columns)
    if unknown:
        raise ExampleError(
            "inputs", f"Decision '{decision_id}' has no input column {', '.join(unknown)}."
        )
    return {
        "decision": decision_id,
        "name": (name or "").strip()[:200],
        "inputs": {key: jsonable(value) for key, value in inputs.items()},
        "expected": jsonable(expected),
    }


def run(document: Mapping[str, Any], rows: list[dict[str, Any]]) -> list[ExampleResult]:
    """Run every row; a row whose decision fails (or no longer exists) fails with the reason."""
    results = []
    for index, row in enumerate(rows):
        try:
            evaluation = dmn.evaluate_table(document, row["decision"], row.get("inputs") or {})
        except dmn.DecisionError as exc:
            results.append(ExampleResult(index, row, False, error=str(exc)))
            continue
        actual = jsonable(evaluation.result)
        passed = actual == row.get("expected")
        results.append(ExampleResult(index, row, passed, actual, tuple(evaluation.matched)))
    return results


def embed(xml: bytes, rows: list[dict[str, Any]]) -> bytes:
    """The DMN file with `rows` written under its definitions' extension elements."""
    root = parse(xml, max_bytes=MAX_BYTES)
    _remove_examples(root)
    if rows:
        extensions = _extension_elements(root, create=True)
        assert extensions is not None
        holder = etree.SubElement(extensions, _EXAMPLES, nsmap={"flowdesk": FLOWDESK})
        for row in rows:
            element = etree.SubElement(holder, _EXAMPLE, decision=row["decision"])
            if row.get("name"):
                element.set("name", row["name"])
            for column, value in (row.get("inputs") or {}).items():
                etree.SubElement(element, _INPUT, column=column).text = json.dumps(value)
            etree.SubElement(element, _EXPECTED).text = json.dumps(row.get("expected"))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def split(xml: bytes | str) -> tuple[bytes | str, list[dict[str, Any]]]:
    """The file without its example rows, and the rows (the file untouched when it has none).

    Raises ExampleError naming the line of a row whose values are not JSON.
    """
    raw = xml.encode() if isinstance(xml, str) else xml
    if FLOWDESK.encode() not in raw or b"examples" not in raw:
        return xml, []
    try:
        root = parse(raw, max_bytes=MAX_BYTES)
    except BpmnImportError:
        return xml, []  # the DMN reader reports what is wrong with the file
    rows = [_read_row(element) for element in root.iter(_EXAMPLE)]
    if not rows:
        return xml, []
    _remove_examples(root)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8"), rows


def _read_row(element: etree._Element) -> dict[str, Any]:
    inputs = {}
    expected = None
    for child in element:
        try:
            value = json.loads(child.text or "null")
        except json.JSONDecodeError:
            raise ExampleError(
                "examples",
                f"Line {child.sourceline}: example value {child.text!r} is not JSON.",
            ) from None
        if child.tag == _INPUT:
            inputs[child.get("column", "")] = value
        elif child.tag == _EXPECTED:
            expected = value
    return {
        "decision": element.get("decision", ""),
        "name": element.get("name", ""),
        "inputs": inputs,
        "expected": expected,
    }


def _extension_elements(root: etree._Element, *, create: bool) -> etree._Element | None:
    namespace = etree.QName(root).namespace
    tag = f"{{{namespace}}}extensionElements" if namespace else "extensionElements"
    found = root.find(tag)
    if found is not None or not create:
        return found
    found = etree.Element(tag)
    description = root.find(f"{{{namespace}}}description" if namespace else "description")
    root.insert(0 if description is None else root.index(description) + 1, found)
    return found


def _remove_examples(root: etree._Element) -> None:
    for holder in list(root.iter(_EXAMPLES)):
        parent = holder.getparent()
        if parent is None:
            continue
        parent.remove(holder)
        if (
            len(parent) == 0
            and parent is not root
            and etree.QName(parent).localname == ("extensionElements")
        ):
            grand = parent.getparent()
            if grand is not None:
                grand.remove(parent)
