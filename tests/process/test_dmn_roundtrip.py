"""write_dmn is lossless for what Flowdesk does not interpret, over the whole DMN corpus."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import SpiffWorkflow.dmn.parser
from lxml import etree

from tests.helpers.dmn import INVOICE_DMN
from tests.helpers.dmn_corpus import corpus_ids, dmn_files
from webapp.process.dmn import evaluate, read_dmn, write_dmn
from webapp.process.dmn.namespaces import attr_name, name_of

FILES = dmn_files()
#: DMN 1.3's XML schema, as SpiffWorkflow ships it (with DMNDI, DC and DI).
SCHEMA = etree.XMLSchema(
    etree.parse(str(Path(SpiffWorkflow.dmn.parser.__file__).parent / "schema" / "DMN13.xsd"))
)


def _elements(xml: bytes, added: tuple[tuple[str, str], ...] = ()) -> Counter:
    """Every element as (name, attributes, text), namespaces made version-independent; an empty
    attribute or description says nothing and may be left out."""
    root = etree.fromstring(xml)
    found: Counter = Counter()
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        text = (element.text or "").strip()
        attrs = tuple(
            sorted(
                (attr_name(k), v)
                for k, v in element.attrib.items()
                if v and (attr_name(k), v) not in added
            )
        )
        if name_of(element.tag) == "description" and not text:
            continue  # an empty description says nothing
        found[(name_of(element.tag), attrs, text)] += 1
    return found


@pytest.mark.skipif(not FILES, reason="DMN corpus not found (set FLOWDESK_DMN_CORPUS)")
@pytest.mark.parametrize("path", FILES, ids=corpus_ids(FILES))
def test_corpus_file_survives_write_and_read(path):
    original = path.read_bytes()
    first = read_dmn(original)
    written = write_dmn(first.document)
    second = read_dmn(written)
    assert second.document == first.document
    blocking = [p.message for p in first.problems if p.blocking]
    assert [p.message for p in second.problems if p.blocking] == blocking
    # A table read as Python (it declares no language) is written saying so.
    python = (("expressionLanguage", "python"),)
    lost = _elements(original, python) - _elements(written, python)
    assert not lost, f"elements lost or changed on writing: {sorted(lost)[:5]}"
    assert b"https://www.omg.org/spec/DMN/20191111/MODEL/" in written
    assert SCHEMA.validate(etree.fromstring(written)), SCHEMA.error_log.last_error


def test_required_decisions_added_and_removed_are_written():
    document = read_dmn(
        b"""<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="d" name="n"
        namespace="x"><decision id="a" name="A"><informationRequirement id="ir1">
        <requiredDecision href="#b"/></informationRequirement><literalExpression>
        <text>b + 1</text></literalExpression></decision><decision id="b" name="b">
        <literalExpression><text>1</text></literalExpression></decision>
        <decision id="c" name="c"><literalExpression><text>2</text></literalExpression>
        </decision></definitions>"""
    ).document
    assert document["decisions"][0]["requires"] == ["b"]
    document["decisions"][0]["requires"] = ["c"]
    again = read_dmn(write_dmn(document)).document
    assert again["decisions"][0]["requires"] == ["c"]
    assert b'id="ir1"' not in write_dmn(document)
    assert SCHEMA.validate(etree.fromstring(write_dmn(document))), SCHEMA.error_log.last_error


def test_the_invoice_example_is_written_as_valid_dmn_1_3():
    written = write_dmn(read_dmn(INVOICE_DMN).document)
    assert SCHEMA.validate(etree.fromstring(written)), SCHEMA.error_log.last_error
    assert b'camunda:inputVariable=""' in written


def test_a_python_table_runs_by_first_match_as_in_spiffworkflow():
    """SpiffWorkflow's Python engine ignores UNIQUE; such a table is read as FIRST, saying so."""
    imported = read_dmn(
        b"""<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="d" name="n"
        namespace="x"><decision id="size" name="Size"><decisionTable id="t">
        <input id="i" label="n"><inputExpression id="e"><text>n</text></inputExpression></input>
        <output id="o" name="size"/>
        <rule id="r1"><inputEntry id="a"><text>== 3</text></inputEntry>
        <outputEntry id="b"><text>"three"</text></outputEntry></rule>
        <rule id="r2"><inputEntry id="c"><text>&gt; 0</text></inputEntry>
        <outputEntry id="d"><text>"other"</text></outputEntry></rule>
        </decisionTable></decision></definitions>""",
        first_match_python=True,
    )
    assert imported.document["decisions"][0]["table"]["hitPolicy"] == "FIRST"
    notes = [p for p in imported.problems if p.code == "dmn.python-first"]
    assert notes and not notes[0].blocking and "size" in notes[0].message
    assert evaluate(imported.document, "size", {"$vars": {"n": 3}}).result == "three"
    written = write_dmn(imported.document)
    assert b'hitPolicy="FIRST"' in written
    imported.document["decisions"][0]["table"]["hitPolicy"] = "UNIQUE"
    # A draft read back keeps the policy its modeller chose.
    again = read_dmn(write_dmn(imported.document)).document
    assert again["decisions"][0]["table"]["hitPolicy"] == "UNIQUE"
