"""Small decision model documents built in code for the DMN library's tests."""

from __future__ import annotations

from typing import Any

from webapp.process.dmn import read_dmn

_TEMPLATE = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="defs" name="t"
  namespace="http://example.com/dmn">
  <decision id="{decision}" name="{decision}">
    <decisionTable id="table" hitPolicy="{policy}"{aggregation}>
{inputs}
{outputs}
{rules}
    </decisionTable>
  </decision>
</definitions>
"""


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def table_xml(
    policy: str,
    tests: list[Any],
    outputs: list[Any],
    *,
    columns: tuple[str, ...] = ("x",),
    output_names: tuple[str, ...] = ("y",),
    output_values: dict[str, str] | None = None,
    aggregation: str | None = None,
    decision: str = "d",
    types: tuple[str, ...] | None = None,
    output_types: tuple[str, ...] | None = None,
) -> str:
    """A one-decision DMN 1.3 file: ``tests[i]`` are rule i's input entries (a text for one column,
    a tuple for several), ``outputs[i]`` its output entries as FEEL text (a bare string is quoted).
    """
    output_values = output_values or {}
    inputs = "\n".join(
        f'      <input id="{name}_in" label="{name}"><inputExpression id="{name}_expr"'
        f' typeRef="{(types or ("",) * len(columns))[i]}"><text>{name}</text>'
        "</inputExpression></input>"
        for i, name in enumerate(columns)
    )
    outs = "\n".join(
        f'      <output id="{name}_out" name="{name}" label="{name}"'
        f' typeRef="{(output_types or ("",) * len(output_names))[i]}">'
        + (
            f"<outputValues><text>{_escape(output_values[name])}</text></outputValues>"
            if name in output_values
            else ""
        )
        + "</output>"
        for i, name in enumerate(output_names)
    )
    rules = []
    for number, (test, output) in enumerate(zip(tests, outputs, strict=True), 1):
        cells = test if isinstance(test, tuple) else (test,)
        values = output if isinstance(output, tuple) else (output,)
        entries = "".join(f"<inputEntry><text>{_escape(c)}</text></inputEntry>" for c in cells)
        entries += "".join(
            "<outputEntry><text>"
            + _escape(v if not isinstance(v, str) or v[:1] in '"[-0123456789' else f'"{v}"')
            + "</text></outputEntry>"
            for v in (str(v) if not isinstance(v, str) else v for v in values)
        )
        rules.append(f'      <rule id="r{number}">{entries}</rule>')
    return _TEMPLATE.format(
        decision=decision,
        policy=policy,
        aggregation=f' aggregation="{aggregation}"' if aggregation else "",
        inputs=inputs,
        outputs=outs,
        rules="\n".join(rules),
    )


def table_document(policy: str, tests: list[Any], outputs: list[Any], **options: Any) -> dict:
    """The document of :func:`table_xml`'s file (problems ignored; tests check them apart)."""
    return read_dmn(table_xml(policy, tests, outputs, **options)).document
