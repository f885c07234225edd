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
            + _escape(v if not isinstance(v, str) or v[:1] in "\"'[-0123456789" else f'"{v}"')
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


#: Camunda 7's invoice example in its DMN 1.1 form (written for these tests): a COLLECT table
#: assigning approver groups, fed by the required UNIQUE classification table.
INVOICE_DMN = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/DMN/20151101/dmn.xsd"
  xmlns:camunda="http://camunda.org/schema/1.0/dmn" id="invoiceBusinessDecisions"
  name="Invoice Business Decisions" namespace="http://camunda.org/schema/1.0/dmn">
  <decision id="invoiceClassification" name="Invoice Classification">
    <decisionTable id="decisionTable">
      <input id="clause1" label="Invoice Amount" camunda:inputVariable="">
        <inputExpression id="inputExpression1" typeRef="double"><text>amount</text>
        </inputExpression>
      </input>
      <input id="InputClause_15qmk0v" label="Invoice Category">
        <inputExpression id="LiteralExpression_1oi86cw" typeRef="string">
          <text>invoiceCategory</text></inputExpression>
      </input>
      <output id="clause3" label="Classification" name="invoiceClassification" typeRef="string"/>
      <rule id="DecisionRule_1of5a87">
        <inputEntry id="LiteralExpression_0yrqmtg"><text>&lt; 250</text></inputEntry>
        <inputEntry id="UnaryTests_06edsin"><text>"Misc"</text></inputEntry>
        <outputEntry id="LiteralExpression_046antl"><text>"day-to-day expense"</text></outputEntry>
      </rule>
      <rule id="DecisionRule_1ak4z14">
        <inputEntry id="LiteralExpression_0qmsef6"><text>[250..1000]</text></inputEntry>
        <inputEntry id="UnaryTests_09b743h"><text>"Misc"</text></inputEntry>
        <outputEntry id="LiteralExpression_05xxvip"><text>"budget"</text></outputEntry>
      </rule>
      <rule id="row-49839158-4">
        <inputEntry id="UnaryTests_1de4dou"><text>&gt; 1000</text></inputEntry>
        <inputEntry id="UnaryTests_14u5nxk"><text>"Misc"</text></inputEntry>
        <outputEntry id="LiteralExpression_1mqcnjh"><text>"exceptional"</text></outputEntry>
      </rule>
      <rule id="DecisionRule_0cuxolz">
        <inputEntry id="LiteralExpression_05lyjk7"><text></text></inputEntry>
        <inputEntry id="UnaryTests_0ve4z34"><text>"Travel Expenses"</text></inputEntry>
        <outputEntry id="LiteralExpression_1bq8m03"><text>"day-to-day expense"</text></outputEntry>
      </rule>
      <rule id="row-49839158-2">
        <inputEntry id="UnaryTests_1mlhh3t"><text></text></inputEntry>
        <inputEntry id="UnaryTests_0jr2xlh"><text>"Software License Costs"</text></inputEntry>
        <outputEntry id="LiteralExpression_0i6ksu5"><text>"budget"</text></outputEntry>
      </rule>
    </decisionTable>
  </decision>
  <decision id="invoice-assign-approver" name="Assign Approver Group">
    <informationRequirement>
      <requiredDecision href="#invoiceClassification"/>
    </informationRequirement>
    <decisionTable id="DecisionTable_16o85h8" hitPolicy="COLLECT">
      <input id="InputClause_0og2hn3" label="Invoice Classification">
        <inputExpression id="LiteralExpression_1vywt5q" typeRef="string">
          <text>invoiceClassification</text></inputExpression>
      </input>
      <output id="OutputClause_1cthd0w" label="Approver Group" name="result" typeRef="string"/>
      <rule id="row-49839158-1">
        <inputEntry id="UnaryTests_18ifczd"><text>"day-to-day expense"</text></inputEntry>
        <outputEntry id="LiteralExpression_0sgxulk"><text>"accounting"</text></outputEntry>
      </rule>
      <rule id="row-49839158-6">
        <inputEntry id="UnaryTests_0kfae8g"><text>"budget", "exceptional"</text></inputEntry>
        <outputEntry id="LiteralExpression_1iksrro"><text>"sales"</text></outputEntry>
      </rule>
      <rule id="row-49839158-5">
        <inputEntry id="UnaryTests_08boyvd"><text>"exceptional"</text></inputEntry>
        <outputEntry id="LiteralExpression_1ky2b4e"><text>"management"</text></outputEntry>
      </rule>
    </decisionTable>
  </decision>
</definitions>
"""
