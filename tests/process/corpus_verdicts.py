"""Per-file verdicts over the shared BPMN corpus: refused (why), imported with the items a person
must still handle (which), or publishable as imported.

Each file is read as the designer reads an upload (`read_upload`, refusing any unsupported
element) and validated as publishing does, with the built-in tools and every process the corpus
defines as callable. The expectations are `corpus_verdicts.txt` beside this module, one line per
file; `test_corpus_verdicts.py` asserts them. After a change that moves verdicts, rewrite it with

    FLOWDESK_BPMN_CORPUS=/path/to/corpus .venv/bin/python -m tests.process.corpus_verdicts --write

and review the diff (`git diff tests/process/corpus_verdicts.txt`). Without `--write` it prints
the counts and the lines that differ from the recorded file.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from lxml import etree

from tests.helpers.corpus import corpus_dir
from tests.helpers.corpus_files import MODELLING_TYPES, manifest
from webapp.process.bpmn.namespaces import BPMN
from webapp.process.bpmn.report import needs_a_person
from webapp.process.validation import validate

RECORDED = Path(__file__).with_name("corpus_verdicts.txt")

#: Refusal categories: an element that carries no behaviour (the importer should keep these), a
#: vendor or standard setting on a supported element that the importer does not map, and an
#: executable element Flowdesk cannot run.
MODELLING, SETTING, EXECUTABLE, FILE = "modelling", "setting", "executable", "file"
#: Unsupported types that only describe the diagram: pools and what links them, plus the
#: artifacts and data elements the importer keeps (never listed today; see test_bpmn_corpus).
MODELLING_ONLY = MODELLING_TYPES | {"process"}
#: Settings of an imported element that the importer leaves out (assignment by resource role).
SETTINGS = {"potentialOwner", "performer", "humanPerformer"}

#: Item categories of an imported file, in the order the verdict lists them: the edits that
#: need a person after an import, then everything else.
TOOL, SCRIPT, GROUP, OTHER = "tool", "script", "group", "other"
ITEM_ORDER = (TOOL, SCRIPT, GROUP, OTHER)


@dataclass(frozen=True)
class Verdict:
    """One file's verdict; `reasons` are (category, type or code, element id) triples."""

    name: str
    status: str  # "refused", "imported" or "publishable"
    reasons: tuple[tuple[str, str, str], ...] = field(default=())

    def categories(self) -> set[str]:
        return {category for category, _, _ in self.reasons}

    def line(self) -> str:
        """The recorded form: `name: verdict`, reasons grouped by category and code."""
        if self.status == "publishable":
            return f"{self.name}: publishable"
        grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
        for category, code, element in self.reasons:
            grouped[(category, code)].append(element)
        order = ITEM_ORDER if self.status == "imported" else (FILE, MODELLING, SETTING, EXECUTABLE)
        parts = [
            f"{category} {code}[{', '.join(sorted(grouped[(category, code)]))}]"
            for category in order
            for code in sorted(c for cat, c in grouped if cat == category)
        ]
        head = "refused" if self.status == "refused" else f"imported, {len(self.reasons)} items"
        return f"{self.name}: {head}: " + "; ".join(parts)


def refusal_category(kind: str) -> str:
    """Classify an unsupported element type (`boundaryEvent[conditional]` is executable)."""
    if kind in SETTINGS:
        return SETTING
    if kind in MODELLING_ONLY:
        return MODELLING
    return EXECUTABLE


@cache
def callable_processes(corpus: Path) -> frozenset[str]:
    """Every process id the corpus defines: a call activity may call any of them, as if the
    person had imported the called file first."""
    ids: set[str] = set()
    for name, _ in manifest(corpus):
        try:
            tree = etree.parse(str(corpus / name), etree.XMLParser(resolve_entities=False))
        except etree.XMLSyntaxError:
            continue
        ids.update(p.get("id", "") for p in tree.iter(f"{{{BPMN}}}process"))
    return frozenset(ids - {""})


def _roles() -> set[str]:
    from webapp.permissions import BUILT_IN_ROLES

    return set(BUILT_IN_ROLES)


def verdict(corpus: Path, name: str, tool_specs: Mapping[str, object] | None = None) -> Verdict:
    """Import `name` as the designer does, then validate it as publishing does."""
    from webapp.engine import tools
    from webapp.plugins import load_tools
    from webapp.services.processes import ImportRefused, read_upload

    load_tools()
    specs = tools.specs() if tool_specs is None else tool_specs
    try:
        result = read_upload((corpus / name).read_bytes())
    except ImportRefused as exc:
        reason = " ".join(exc.message.split())[:100]
        return Verdict(name, "refused", ((FILE, exc.code, reason),))
    unsupported = [
        u
        for u in result.unsupported
        if not (u.type == "sequenceFlow" and "not imported" in u.detail)  # follows another one
    ]
    if unsupported:
        reasons = tuple((refusal_category(u.type), u.type, u.id) for u in unsupported)
        return Verdict(name, "refused", reasons)
    problems = validate(result.document, specs, callable_processes(corpus), _roles())
    items = [
        (category, problem.code, problem.element_id or "-")
        for category, found in needs_a_person(problems).items()
        for problem in found
    ]
    if items:
        return Verdict(name, "imported", tuple(sorted(items)))
    return Verdict(name, "publishable")


def verdicts(corpus: Path) -> list[Verdict]:
    """The verdict of every file of the corpus manifest, sorted by file name."""
    from webapp.engine import tools
    from webapp.plugins import load_tools

    load_tools()
    specs = tools.specs()
    return [verdict(corpus, name, specs) for name in sorted(n for n, _ in manifest(corpus))]


def render(found: Iterable[Verdict]) -> str:
    """The text of corpus_verdicts.txt."""
    header = (
        "# Verdict of every BPMN corpus file (tests/process/corpus_verdicts.py says how).\n"
        "# Regenerate: python -m tests.process.corpus_verdicts --write\n"
    )
    return header + "".join(f"{v.line()}\n" for v in found)


def recorded_lines(text: str) -> dict[str, str]:
    """File name -> recorded line."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return {line.split(": ", 1)[0]: line for line in lines}


def differences(found: Iterable[Verdict], text: str) -> list[str]:
    """Readable `- recorded` / `+ now` pairs for each file whose verdict changed."""
    now = {v.name: v.line() for v in found}
    before = recorded_lines(text)
    out = []
    for name in sorted(now.keys() | before.keys()):
        if now.get(name) != before.get(name):
            out.append(f"- {before.get(name, f'{name}: (not recorded)')}")
            out.append(f"+ {now.get(name, f'{name}: (not in the corpus)')}")
    return out


def summary(found: list[Verdict]) -> str:
    """Counts: refused (by category), imported, publishable, and the items by category."""
    status = Counter(v.status for v in found)
    refused_for = Counter(c for v in found if v.status == "refused" for c in v.categories())
    items = Counter(r[0] for v in found if v.status == "imported" for r in v.reasons)
    only_person = sum(
        1 for v in found if v.status == "imported" and v.categories() <= {TOOL, SCRIPT, GROUP}
    )
    codes = Counter(r[1] for v in found if v.status == "imported" for r in v.reasons)
    lines = [
        f"files {len(found)}: refused {status['refused']}, imported with items "
        f"{status['imported']}, publishable {status['publishable']}",
        "refused for (a file can have several): "
        + ", ".join(f"{c} {n}" for c, n in sorted(refused_for.items())),
        f"imported files whose only items are tools, scripts or groups: {only_person}",
        "items: " + ", ".join(f"{c} {items[c]}" for c in ITEM_ORDER),
        *(f"  {n:3} {code}" for code, n in codes.most_common()),
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    corpus = corpus_dir()
    if corpus is None:
        print("BPMN corpus not found: set FLOWDESK_BPMN_CORPUS", file=sys.stderr)
        return 2
    found = verdicts(corpus)
    print(summary(found))
    if "--write" in argv:
        RECORDED.write_text(render(found), encoding="utf-8")
        print(f"wrote {RECORDED}")
        return 0
    changed = differences(found, RECORDED.read_text(encoding="utf-8"))
    print("\n".join(changed) if changed else "verdicts match the recorded file")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
