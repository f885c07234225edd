"""Input and output mappings of a tool call (Camunda `inputOutput`, Zeebe `ioMapping`): read
into inputs and `saveTo`, kept as written, and the current inputs written back."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from webapp.process.document import is_identifier

from .. import conditions, kept
from ..namespaces import CAMUNDA, JUEL_VENDORS, ZEEBE, q, split
from .common import (
    NAMESPACES,
    VENDOR_NAMES,
    Added,
    Warn,
    as_mapping,
    canonical_tree,
    find_extension,
    quiet,
)

#: The vendor extension elements that hold a tool call's mappings.
IO_ELEMENTS = ("inputOutput", "ioMapping")


def read_outputs(config: dict[str, Any], element: etree._Element, warn: Warn) -> None:
    """Output mappings of a tool call. A Camunda connector's whole `${response}` copied into one
    variable becomes `saveTo`; a mapping that copies a result variable under its own name
    (`=id` to `id`) needs nothing, as the variables pool merges the tool's result key by key
    (when there is no `saveTo`); any other mapping is reported, not imported."""
    found: list[tuple[str, str]] = []
    io = find_extension(element, JUEL_VENDORS, "inputOutput")
    for parameter in io if io is not None else []:
        if split(parameter.tag)[1] == "outputParameter":
            text = "" if len(parameter) else (parameter.text or "").strip()
            found.append((parameter.get("name", ""), text))
    mapping = find_extension(element, (ZEEBE,), "ioMapping")
    for parameter in mapping if mapping is not None else []:
        if split(parameter.tag)[1] == "output":
            found.append((parameter.get("target", ""), (parameter.get("source") or "").strip()))
    for target, source in found:
        juel = source[:2] in ("${", "#{") and source.endswith("}")
        name = source[2:-1].strip() if juel else source.removeprefix("=").strip()
        if not (juel or source.startswith("=")) or not is_identifier(target):
            name = ""
        if juel and name == "response" and len(found) == 1 and "saveTo" not in config:
            config["saveTo"] = target
        elif name != target or "saveTo" in config:
            warn("import.output_lossy", f"Output '{target}' = '{source[:80]}' not imported")


def input_parameters(element: etree._Element, warn: Warn) -> dict[str, str]:
    """A tool call's inputs from Camunda `inputParameter`s and Zeebe `input`s."""
    inputs: dict[str, str] = {}
    io = find_extension(element, JUEL_VENDORS, "inputOutput")
    for parameter in io if io is not None else []:
        if split(parameter.tag)[1] != "inputParameter":
            continue
        name = parameter.get("name", "")
        if len(parameter):
            warn("import.input_lossy", f"Input '{name}' (map, list or script) not imported")
            continue
        inputs[name] = _value(name, parameter.text or "", warn)
    mapping = find_extension(element, (ZEEBE,), "ioMapping")
    for parameter in mapping if mapping is not None else []:
        name = parameter.get("target", "")
        if split(parameter.tag)[1] == "input" and name:
            inputs[name] = _value(name, parameter.get("source", ""), warn)
    return inputs


def _value(name: str, text: str, warn: Warn) -> str:
    """A vendor input: `${...}`/`=...` is an expression, anything else a literal string."""
    translated = conditions.translate_value(text)
    if not translated.ok:
        warn("import.expression_untranslated", f"Input '{name}' kept as written: {text[:80]}")
    return translated.text


def io_origin(element: etree._Element) -> tuple[str, str, Any] | None:
    """(vendor, "io", the input/output mapping as written) of a tool call, if any."""
    mapping = find_extension(element, JUEL_VENDORS, "inputOutput")
    if mapping is None:
        mapping = find_extension(element, (ZEEBE,), "ioMapping")
    if mapping is None:
        return None
    return VENDOR_NAMES[split(mapping.tag)[0]], "io", canonical_tree(mapping)


def _saved_to(element: etree._Element) -> str | None:
    probe: dict[str, Any] = {}
    read_outputs(probe, element, quiet)
    return probe.get("saveTo")


def write_inputs(
    element: etree._Element, config: dict[str, Any], origin: dict[str, Any], dialect: str | None
) -> None:
    """Write a tool call's current inputs in its vendor's mapping: as the file had it when it still
    says them, else generated, else not at all."""
    wanted = as_mapping(config.get("inputs"))
    tree = origin.get("io") if isinstance(origin.get("io"), dict) else None
    added = Added(element)
    if tree is not None:
        added.extension(kept.to_xml(tree))

    def same() -> bool:
        saved = _saved_to(element)
        return input_parameters(element, quiet) == wanted and saved in (None, config.get("saveTo"))

    if same():
        return
    outputs = [
        copy
        for child in added.children
        for copy in child
        if split(copy.tag)[1] in ("outputParameter", "output")
    ]
    added.undo()
    namespace = (
        split(str(tree.get("tag")))[0] if tree is not None else NAMESPACES.get(dialect or "")
    )
    if namespace not in (CAMUNDA, ZEEBE) or (not wanted and not outputs):
        return
    feel = namespace == ZEEBE
    mapping = etree.Element(q(namespace, "ioMapping" if feel else "inputOutput"))
    for name, value in sorted(wanted.items()):  # the order <flowdesk:config> gives back
        text = _vendor_input(value, feel)
        if text is None or not isinstance(name, str):
            return
        try:
            if feel:
                etree.SubElement(mapping, q(ZEEBE, "input"), source=text, target=name)
            else:
                etree.SubElement(mapping, q(namespace, "inputParameter"), name=name).text = text
        except ValueError:
            return
    mapping.extend(outputs)
    added.extension(mapping)
    if not same():
        for output in outputs:
            mapping.remove(output)
        if not same() or not len(mapping):
            added.undo()


_ESCAPES = {"\\\\": "\\", "\\n": "\n", "\\r": "\r", "\\t": "\t", "\\'": "'", '\\"': '"'}


def _vendor_input(value: Any, feel: bool = False) -> str | None:
    """A Camunda input parameter's text (a Zeebe input's source) for our input value: `${path}`
    (`=path`) for a variable path, the text of a string literal; None when neither reads back
    as `value` exactly."""
    if not isinstance(value, str):
        return None
    path = conditions.to_vendor(value, conditions.FEEL if feel else conditions.JUEL)
    if path is not None:
        return path
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        text = re.sub(r"\\[\\nrt'\"]", lambda m: _ESCAPES[m.group()], value[1:-1])
        translated = conditions.translate_value(text)
        if translated.ok and translated.text == value:
            return text
    return None
