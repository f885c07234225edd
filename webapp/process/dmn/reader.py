"""Read DMN 1.1-1.5 XML (Camunda 7 and 8, SpiffArena, bpmn.io) into the decision model document.

Entries are translated to Flowdesk expressions as they are read; what cannot be translated is
marked in the document and named on the problems list. Everything not interpreted is kept.
"""

from __future__ import annotations

from typing import Any

from lxml import etree

from ..bpmn import safe_xml
from ..bpmn.model import BpmnImportError
from . import translate
from .checks import untranslated
from .model import FORMAT, HIT_POLICIES, DmnImport, DmnImportError, DmnProblem
from .namespaces import (
    DC,
    DI,
    DMNDI13,
    MODEL_URIS,
    WRITE_NSMAP,
    attr_name,
    name_of,
    split,
    to_tree,
)
from .translate import translate_table

MAX_BYTES = 5_000_000
_AGGREGATIONS = {"SUM", "MIN", "MAX", "COUNT"}
_HIT_ALIASES = {"RULE_ORDER": "RULE ORDER", "OUTPUT_ORDER": "OUTPUT ORDER"}
_WRITTEN_URIS = {*MODEL_URIS, DMNDI13, DC, DI, "http://www.omg.org/spec/DMN/20180521/DMNDI/"}


def read_dmn(
    data: bytes | str, *, max_bytes: int = MAX_BYTES, first_match_python: bool = False
) -> DmnImport:
    """Read a DMN file; DmnImportError (with a line) only when it cannot be read at all.

    ``first_match_python``: importing another tool's file, read a Python table declaring UNIQUE
    as FIRST, the way SpiffWorkflow runs it (a draft read back keeps what its modeller chose)."""
    try:
        root = safe_xml.parse(data, max_bytes=max_bytes)
    except BpmnImportError as exc:
        message = exc.message.replace("BPMN files", "DMN files").replace(
            "BPMN import", "DMN import"
        )
        raise DmnImportError(message, exc.line) from None
    namespace, local = split(root.tag)
    if local != "definitions" or namespace not in MODEL_URIS:
        raise DmnImportError(
            f"Not a DMN file: the root element is <{local or root.tag}> in "
            f"{namespace or 'no namespace'}, not DMN's <definitions>",
            root.sourceline,
        )
    try:
        return _Reader(root, first_match_python).read()
    except (ValueError, RecursionError) as exc:
        raise DmnImportError(f"Cannot read the file: {exc}", root.sourceline) from None


def _line(element: etree._Element) -> int | None:
    return element.sourceline if isinstance(element.sourceline, int) else None


class _Reader:
    """One pass over <definitions>; ``kept`` collects what Flowdesk does not interpret."""

    def __init__(self, root: etree._Element, first_match_python: bool = False) -> None:
        self.root = root
        self.first_match_python = first_match_python
        self.problems: list[DmnProblem] = []
        self.elements: dict[str, dict[str, Any]] = {}
        self.used_ids: set[str] = {str(e.get("id")) for e in root.iter() if e.get("id")}

    def problem(
        self,
        code: str,
        element_id: str | None,
        element: etree._Element,
        message: str,
        *,
        blocking: bool = True,
    ) -> None:
        self.problems.append(DmnProblem(code, element_id, _line(element), message, blocking))

    def fresh(self, base: str) -> str:
        candidate, number = base, 1
        while candidate in self.used_ids:
            number += 1
            candidate = f"{base}_{number}"
        self.used_ids.add(candidate)
        return candidate

    def keep(
        self,
        key: str,
        element: etree._Element,
        interpreted: tuple[str, ...],
        attrs: tuple[str, ...],
    ) -> None:
        """Record the attributes and children of ``element`` that Flowdesk does not interpret."""
        extra_attrs = {
            attr_name(k): v for k, v in element.attrib.items() if attr_name(k) not in attrs
        }
        children = [child for child in element if isinstance(child.tag, str)]
        extra = [
            [index, to_tree(child)]
            for index, child in enumerate(children)
            if name_of(child.tag) not in interpreted
        ]
        entry: dict[str, Any] = {}
        if extra_attrs:
            entry["attrs"] = extra_attrs
        if extra:
            entry["children"] = extra
        if entry:
            self.elements[key] = entry

    def read(self) -> DmnImport:
        root = self.root
        decisions = [
            self.decision(child)
            for child in root
            if isinstance(child.tag, str) and name_of(child.tag) == "decision"
        ]
        self.keep("definitions", root, ("decision",), ("id", "name", "namespace"))
        nsmap = _kept_prefixes(root.nsmap)
        kept: dict[str, Any] = {}
        if nsmap:
            kept["nsmap"] = nsmap
        if self.elements:
            kept["elements"] = self.elements
        document = {
            "format": FORMAT,
            "id": root.get("id") or self.fresh("definitions"),
            "name": root.get("name") or "",
            "namespace": root.get("namespace") or "",
            "dmnVersion": "1.3",
            "decisions": decisions,
            "kept": kept,
        }
        self.problems.extend(untranslated(document, self.lines))
        return DmnImport(document, self.problems)

    @property
    def lines(self) -> dict[str, int]:
        """Source lines by element id, for naming problems."""
        return {
            str(e.get("id")): e.sourceline
            for e in self.root.iter()
            if e.get("id") and isinstance(e.sourceline, int)
        }

    def decision(self, element: etree._Element) -> dict[str, Any]:
        decision_id = element.get("id") or self.fresh("decision")
        requires = []
        for requirement in element:
            if name_of(requirement.tag) != "informationRequirement":
                continue
            for ref in requirement:
                if name_of(ref.tag) == "requiredDecision":
                    href = ref.get("href") or ""
                    requires.append(href.rpartition("#")[2] or href)
        decision: dict[str, Any] = {
            "id": decision_id,
            "name": element.get("name") or "",
            "kind": "table",
            "requires": requires,
        }
        interpreted: tuple[str, ...] = ("decisionTable", "literalExpression")
        table = next((c for c in element if name_of(c.tag) == "decisionTable"), None)
        literal = next((c for c in element if name_of(c.tag) == "literalExpression"), None)
        if table is not None:
            decision["table"] = self.table(decision_id, table)
        elif literal is not None:
            decision["kind"] = "literal"
            variable = next((c for c in element if name_of(c.tag) == "variable"), None)
            decision["literal"] = self.literal(decision_id, literal, variable)
            interpreted = (*interpreted, "variable")
        else:
            decision["kind"] = "none"
        self.keep(decision_id, element, interpreted, ("id", "name"))
        return decision

    def table(self, decision_id: str, element: etree._Element) -> dict[str, Any]:
        raw_policy = (element.get("hitPolicy") or "UNIQUE").strip().upper()
        policy = _HIT_ALIASES.get(raw_policy, raw_policy)
        if policy not in HIT_POLICIES:
            self.problem(
                "dmn.hit-policy",
                decision_id,
                element,
                f"Decision '{decision_id}' has the unknown hit policy '{raw_policy}'.",
            )
        aggregation = (element.get("aggregation") or "").strip().upper() or None
        if aggregation is not None and (aggregation not in _AGGREGATIONS or policy != "COLLECT"):
            self.problem(
                "dmn.aggregation",
                decision_id,
                element,
                f"Decision '{decision_id}': the aggregation '{aggregation}' is only allowed as "
                "SUM, MIN, MAX or COUNT under the COLLECT hit policy.",
            )
        children = [c for c in element if isinstance(c.tag, str)]
        inputs = [self.input(decision_id, c, i) for i, c in enumerate(_named(children, "input"))]
        outputs = [self.output(decision_id, c, i) for i, c in enumerate(_named(children, "output"))]
        rules = [self.rule(decision_id, c, i) for i, c in enumerate(_named(children, "rule"))]
        self.keep(
            f"{decision_id}/table",
            element,
            ("input", "output", "rule"),
            ("hitPolicy", "aggregation"),
        )
        table = {
            "hitPolicy": policy,
            "aggregation": aggregation,
            "inputs": inputs,
            "outputs": outputs,
            "rules": rules,
        }
        declared = self.root.get("expressionLanguage")
        cells = [cell for rule in rules for cell in [*rule["inputs"], *rule["outputs"]]]
        if (
            declared
            or any(part["language"] for part in inputs)
            or any("language" in c for c in cells)
        ):
            translate_table(table, translate.language_of(declared))
        elif _is_python(table):
            for column in inputs:
                column["language"] = "python"
            translate_table(table, "python")
            self.problem(
                "dmn.python",
                decision_id,
                element,
                f"Decision '{decision_id}' declares no expression language and its entries are "
                "Python, not FEEL: read as SpiffWorkflow's Python entries (and written with "
                'expressionLanguage="python").',
                blocking=False,
            )
        python = any(c.get("language") == "python" for c in inputs)
        if self.first_match_python and python and table["hitPolicy"] == "UNIQUE":
            table["hitPolicy"] = "FIRST"
            self.problem(
                "dmn.python-first",
                decision_id,
                element,
                f"Decision '{decision_id}' is a SpiffWorkflow table, which SpiffWorkflow runs by "
                "first match whatever its hit policy says: read as FIRST so it decides as it did "
                "there.",
                blocking=False,
            )
        return table

    def input(self, decision_id: str, element: etree._Element, index: int) -> dict[str, Any]:
        input_id = element.get("id") or self.fresh(f"{decision_id}_input_{index + 1}")
        label = element.get("label") or ""
        source = next((c for c in element if name_of(c.tag) == "inputExpression"), None)
        text, language, type_ = "", "", ""
        if source is not None:
            text = _text_of(source)
            language = source.get("expressionLanguage") or ""
            type_ = source.get("typeRef") or ""
            self.keep(
                f"{input_id}/expression", source, ("text",), ("typeRef", "expressionLanguage")
            )
        self.keep(input_id, element, ("inputExpression",), ("id", "label"))
        column = {"id": input_id, "label": label, "text": text, "language": language}
        if not text.strip() and label.isidentifier():
            self.problem(
                "dmn.input-label",
                decision_id,
                element,
                f"Decision '{decision_id}', input '{label}': no input expression; Flowdesk reads "
                f"the variable named by the label ($vars.{label}), as SpiffWorkflow does.",
                blocking=False,
            )
        return {**column, "expression": None, "type": type_}

    def output(self, decision_id: str, element: etree._Element, index: int) -> dict[str, Any]:
        output_id = element.get("id") or self.fresh(f"{decision_id}_output_{index + 1}")
        values_element = next((c for c in element if name_of(c.tag) == "outputValues"), None)
        values: list[Any] = []
        interpreted: tuple[str, ...] = ()
        if values_element is not None:
            text = _text_of(values_element)
            values = _literal_list(text)
            if values or not text.strip():
                interpreted = ("outputValues",)
                self.keep(f"{output_id}/values", values_element, ("text",), ())
        self.keep(output_id, element, interpreted, ("id", "label", "name", "typeRef"))
        return {
            "id": output_id,
            "label": element.get("label") or "",
            "name": element.get("name") or "",
            "type": element.get("typeRef") or "",
            "values": values,
        }

    def rule(self, decision_id: str, element: etree._Element, index: int) -> dict[str, Any]:
        rule_id = element.get("id") or self.fresh(f"{decision_id}_rule_{index + 1}")
        description = next((c for c in element if name_of(c.tag) == "description"), None)
        ins = [c for c in element if name_of(c.tag) == "inputEntry"]
        outs = [c for c in element if name_of(c.tag) == "outputEntry"]
        for column, entry in enumerate(ins):
            self.keep(f"{rule_id}/in/{column}", entry, ("text",), ("expressionLanguage",))
        for column, entry in enumerate(outs):
            self.keep(f"{rule_id}/out/{column}", entry, ("text",), ("expressionLanguage",))
        self.keep(rule_id, element, ("description", "inputEntry", "outputEntry"), ("id",))
        return {
            "id": rule_id,
            "description": (description.text or "") if description is not None else "",
            "inputs": [_entry(entry) for entry in ins],
            "outputs": [_entry(entry) for entry in outs],
        }

    def literal(
        self, decision_id: str, element: etree._Element, variable: etree._Element | None
    ) -> dict[str, Any]:
        text = _text_of(element)
        literal: dict[str, Any] = {
            "text": text,
            "language": element.get("expressionLanguage") or "",
            "expression": None,
            "variable": variable.get("name") or "" if variable is not None else "",
            "type": element.get("typeRef")
            or (variable.get("typeRef") or "" if variable is not None else ""),
        }
        translate.translate_literal(
            literal, translate.language_of(self.root.get("expressionLanguage"))
        )
        self.keep(f"{decision_id}/literal", element, ("text",), ("typeRef", "expressionLanguage"))
        if variable is not None:
            self.keep(f"{decision_id}/variable", variable, (), ("name", "typeRef"))
        return literal


def _entry(element: etree._Element) -> dict[str, Any]:
    """An entry's text, and its language when it names one of its own."""
    entry = {"text": _text_of(element)}
    if element.get("expressionLanguage"):
        entry["language"] = str(element.get("expressionLanguage"))
    return entry


def _text_of(element: etree._Element) -> str:
    text = next((c for c in element if name_of(c.tag) == "text"), None)
    return (text.text or "") if text is not None else ""


def _kept_prefixes(declared: dict[str | None, str]) -> dict[str, str]:
    """The file's other namespace prefixes; one that DMN 1.3's own take gets a digit appended."""
    taken = {prefix for prefix in WRITE_NSMAP if prefix}
    kept: dict[str, str] = {}
    for prefix, uri in declared.items():
        if not prefix or uri in _WRITTEN_URIS or uri in kept.values():
            continue
        name, number = prefix, 1
        while name in taken or name in kept:
            name, number = f"{prefix}{number}", number + 1
        kept[name] = uri
    return kept


def _is_python(table: dict[str, Any]) -> bool:
    """Whether a table that declares no language is SpiffWorkflow's Python rather than FEEL:
    Python reads more of its entries, or as many when they use True, False or None."""
    feel = translate_table(table, "feel")
    python_names = any(
        token.kind == "name" and token.value in ("True", "False", "None")
        for rule in table["rules"]
        for cell in [*rule["inputs"], *rule["outputs"]]
        for token in _tokens(cell["text"])
    )
    if not feel and not python_names:
        return False
    python = translate_table(table, "python")
    chosen = python < feel or (python == feel == 0)
    if not chosen:
        translate_table(table, "feel")
    return chosen


def _tokens(text: str) -> list[Any]:
    try:
        return translate.tokenize(text)
    except translate.Untranslatable:
        return []


def _named(children: list[etree._Element], local: str) -> list[etree._Element]:
    return [child for child in children if name_of(child.tag) == local]


def _literal_list(text: str) -> list[Any]:
    """Allowed output values (``"a","b"``) as a list of literals; [] when not all are literals."""
    values: list[Any] = []
    try:
        tokens = translate.tokenize(text)
    except translate.Untranslatable:
        return []
    for part in translate.split_top(tokens, ","):
        if len(part) != 1 or part[0].kind not in ("string", "number"):
            return []
        token = part[0]
        if token.kind == "string":
            values.append(token.value[1:-1])
        else:
            values.append(float(token.value) if "." in token.value else int(token.value))
    return values
