"""Write the decision model document as DMN 1.3 XML, putting back everything Flowdesk keeps.

Kept attributes and children return at the positions they were read from, so read -> write ->
read gives the same document and DI, extension elements and vendor attributes survive.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lxml import etree

from .model import decisions
from .namespaces import WRITE_NSMAP, from_tree, tag_of

_WRITTEN_PREFIXES = {prefix for prefix in WRITE_NSMAP if prefix}


def write_dmn(document: Mapping[str, Any]) -> bytes:
    """The document as DMN 1.3 XML bytes (UTF-8, with an XML declaration)."""
    return _Writer(document).write()


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _literal(value: Any) -> str:
    """An allowed output value as FEEL text."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return _text(value)


def _required(tree: Mapping[str, Any]) -> str | None:
    """The decision id a kept informationRequirement points at, or None for other kinds."""
    if tree.get("tag") != "informationRequirement":
        return None
    for child in tree.get("children") or []:
        if child.get("tag") == "requiredDecision":
            href = str((child.get("attrs") or {}).get("href") or "")
            return href.rpartition("#")[2] or href
    return None


class _Writer:
    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        kept = document.get("kept") or {}
        self.elements: Mapping[str, Any] = kept.get("elements") or {}
        nsmap: dict[str | None, str] = dict(WRITE_NSMAP)
        for prefix, uri in (kept.get("nsmap") or {}).items():
            if prefix and prefix not in _WRITTEN_PREFIXES and uri not in nsmap.values():
                nsmap[prefix] = uri
        self.nsmap = nsmap

    def element(
        self,
        key: str,
        local: str,
        attrs: Mapping[str, Any],
        children: list[etree._Element],
        *,
        keep_child: Any = None,
    ) -> etree._Element:
        """Build ``local`` with its kept attributes and children merged back in place."""
        kept = self.elements.get(key) or {}
        element = etree.Element(tag_of(local), nsmap=self.nsmap if key == "definitions" else None)
        for name, value in (kept.get("attrs") or {}).items():
            element.set(name, _text(value))
        for name, value in attrs.items():
            if value not in (None, ""):
                element.set(name, _text(value))
        for child in children:
            element.append(child)
        skipped = 0
        for index, tree in kept.get("children") or []:
            if keep_child is not None and not keep_child(tree):
                skipped += 1
                continue
            element.insert(int(index) - skipped, from_tree(tree))
        return element

    def text(self, key: str, local: str, attrs: Mapping[str, Any], text: Any) -> etree._Element:
        node = etree.Element(tag_of("text"))
        node.text = _text(text)
        return self.element(key, local, attrs, [node])

    def write(self) -> bytes:
        document = self.document
        root = self.element(
            "definitions",
            "definitions",
            {
                "id": document.get("id"),
                "name": document.get("name"),
                "namespace": document.get("namespace"),
            },
            [self.decision(decision) for decision in decisions(document)],
        )
        return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)

    def decision(self, decision: Mapping[str, Any]) -> etree._Element:
        decision_id = str(decision["id"])
        requires = list(decision.get("requires") or [])
        kept = self.elements.get(decision_id) or {}
        present = {_required(tree) for _, tree in kept.get("children") or []}
        children = []
        literal = decision.get("literal") or {}
        if decision.get("kind") == "literal" and literal.get("variable"):
            children.append(
                self.element(
                    f"{decision_id}/variable",
                    "variable",
                    {"name": literal["variable"], "typeRef": literal.get("type")},
                    [],
                )
            )
        for other in requires:
            if other not in present:
                requirement = etree.Element(tag_of("informationRequirement"))
                etree.SubElement(requirement, tag_of("requiredDecision")).set("href", f"#{other}")
                children.append(requirement)
        if decision.get("kind") == "literal":
            children.append(
                self.text(
                    f"{decision_id}/literal",
                    "literalExpression",
                    {"typeRef": literal.get("type"), "expressionLanguage": literal.get("language")},
                    literal.get("text"),
                )
            )
        elif decision.get("table") is not None:
            children.append(self.table(decision_id, decision["table"]))

        def wanted(tree: Mapping[str, Any]) -> bool:
            target = _required(tree)
            return target is None or target in requires

        return self.element(
            decision_id,
            "decision",
            {"id": decision_id, "name": decision.get("name")},
            children,
            keep_child=wanted,
        )

    def table(self, decision_id: str, table: Mapping[str, Any]) -> etree._Element:
        policy = table.get("hitPolicy") or "UNIQUE"
        children = [self.input(column) for column in table.get("inputs", [])]
        children += [self.output(output) for output in table.get("outputs", [])]
        children += [self.rule(rule) for rule in table.get("rules", [])]
        return self.element(
            f"{decision_id}/table",
            "decisionTable",
            {
                "hitPolicy": None if policy == "UNIQUE" else policy,
                "aggregation": table.get("aggregation"),
            },
            children,
        )

    def input(self, column: Mapping[str, Any]) -> etree._Element:
        input_id = str(column["id"])
        source = self.text(
            f"{input_id}/expression",
            "inputExpression",
            {"typeRef": column.get("type"), "expressionLanguage": column.get("language")},
            column.get("text"),
        )
        return self.element(
            input_id, "input", {"id": input_id, "label": column.get("label")}, [source]
        )

    def output(self, output: Mapping[str, Any]) -> etree._Element:
        output_id = str(output["id"])
        children = []
        values = output.get("values") or []
        if values:
            text = ",".join(_literal(value) for value in values)
            children.append(self.text(f"{output_id}/values", "outputValues", {}, text))
        attrs = {
            "id": output_id,
            "label": output.get("label"),
            "name": output.get("name"),
            "typeRef": output.get("type"),
        }
        return self.element(output_id, "output", attrs, children)

    def rule(self, rule: Mapping[str, Any]) -> etree._Element:
        rule_id = str(rule["id"])
        children = []
        if rule.get("description"):
            description = etree.Element(tag_of("description"))
            description.text = _text(rule["description"])
            children.append(description)
        for index, cell in enumerate(rule.get("inputs", [])):
            language = {"expressionLanguage": cell.get("language")}
            key = f"{rule_id}/in/{index}"
            children.append(self.text(key, "inputEntry", language, cell.get("text")))
        for index, cell in enumerate(rule.get("outputs", [])):
            language = {"expressionLanguage": cell.get("language")}
            key = f"{rule_id}/out/{index}"
            children.append(self.text(key, "outputEntry", language, cell.get("text")))
        return self.element(rule_id, "rule", {"id": rule_id}, children)
