"""XML namespace URIs used by BPMN 2.0 files and the vendor extensions we read.

Elements are always matched by namespace URI, never by prefix: real files use `bpmn:`, `bpmn2:`,
`semantic:`, `model:` or the default namespace for the same thing.
"""

from __future__ import annotations

BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"
BPMNDI = "http://www.omg.org/spec/BPMN/20100524/DI"
DC = "http://www.omg.org/spec/DD/20100524/DC"
DI = "http://www.omg.org/spec/DD/20100524/DI"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
FLOWDESK = "https://flowdesk.dev/schema/bpmn/1.0"

CAMUNDA = "http://camunda.org/schema/1.0/bpmn"
FLOWABLE = "http://flowable.org/bpmn"
ACTIVITI = "http://activiti.org/bpmn"
ZEEBE = "http://camunda.org/schema/zeebe/1.0"
SPIFF = "http://spiffworkflow.org/bpmn/schema/1.0/core"
JBPM = "http://www.jboss.org/drools"

#: Camunda 7, Flowable and Activiti share attribute names (assignee, candidateGroups, formField...).
JUEL_VENDORS = (CAMUNDA, FLOWABLE, ACTIVITI)

#: Prefixes written on export (bpmn.io conventions).
EXPORT_NSMAP = {
    "bpmn": BPMN,
    "bpmndi": BPMNDI,
    "dc": DC,
    "di": DI,
    "xsi": XSI,
    "flowdesk": FLOWDESK,
}

#: Expression language URI written on our own conditions and timer dates.
FLOWDESK_LANGUAGE = "flowdesk"


def q(namespace: str, local: str) -> str:
    """Return the Clark-notation name `{namespace}local` used by lxml."""
    return f"{{{namespace}}}{local}"


def split(tag: object) -> tuple[str, str]:
    """Split a Clark-notation tag into (namespace, local name); comments give ("", "")."""
    if not isinstance(tag, str):
        return "", ""
    if tag.startswith("{"):
        namespace, _, local = tag[1:].partition("}")
        return namespace, local
    return "", tag
