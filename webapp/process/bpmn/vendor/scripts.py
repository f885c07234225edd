"""Script tasks: the script and its language as the file has it, an expression with a result
variable (JUEL, FEEL) or a SpiffWorkflow Python script translated when it can be."""

from __future__ import annotations

from typing import Any

from lxml import etree

from webapp.process.document import is_identifier
from webapp.process.kinds import EMPTY_SCRIPT

from .. import conditions
from ..namespaces import FLOWDESK, JBPM, SPIFF, ZEEBE, q, split
from .common import Warn, find_extension, vendor_attr

#: Script formats that are expressions: with a result variable they become one assignment.
_EXPRESSION_FORMATS = ("juel", "feel")


def script_task_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """Script and language of a script task: `scriptFormat` lower-cased and the `<script>` text
    verbatim; an expression (JUEL, Zeebe's FEEL) with a result variable becomes our assignment.
    Without `scriptFormat` a file Flowdesk touched means our default, a SpiffWorkflow file Python,
    any other file an unknown language (`unspecified`)."""
    script = element.find(q(split(element.tag)[0], "script"))
    text = "".join(script.itertext()) if script is not None else None
    language = (element.get("scriptFormat") or "").strip().lower()
    declared = set(element.getroottree().getroot().nsmap.values())
    if not language and FLOWDESK in declared:
        return {} if text is None else {"script": text}
    if not language:
        language = "python" if SPIFF in declared else "unspecified"
    result = vendor_attr(element, "resultVariable")
    zeebe = find_extension(element, (ZEEBE,), "script")
    if zeebe is not None and zeebe.get("expression"):
        text, language, result = zeebe.get("expression"), "feel", zeebe.get("resultVariable")
    if vendor_attr(element, "resource"):
        warn("import.script_resource", "The external script resource is not imported")
    elif not (text or "").strip() and declared & {JBPM, SPIFF}:
        warn(
            "import.script_empty",
            "The script is empty; it runs as a no-op, as in jBPM and SpiffWorkflow",
        )
        return {"language": "flowdesk", "script": "", EMPTY_SCRIPT: True}
    if text is None:
        return {"language": language}
    if language in _EXPRESSION_FORMATS and result and is_identifier(result):
        translated = conditions.translate(text.strip(), language)
        if translated.ok:
            return {"language": "flowdesk", "script": f"{result} = {translated.text}"}
    if language == "python" and not result:
        translated = conditions.translate_script(text)
        if translated.ok:
            return {"language": "flowdesk", "script": translated.text}
    config: dict[str, Any] = {"language": language, "script": text}
    if result:
        config["resultVariable"] = result
    if language != "flowdesk":
        warn(
            "import.script_language",
            f"Script in '{language}' imported as written; rewrite it in Flowdesk's language "
            "before publishing",
        )
    return config
