"""DMN namespace URIs of versions 1.1 to 1.5 and the tree form kept fragments are stored in.

Fragments Flowdesk does not interpret (DI, extension elements, input data, knowledge sources)
are kept as JSON trees with DMN model names bare and DI names in DMN 1.3's namespaces, so the
same document comes back whichever version and prefixes the file used.
"""

from __future__ import annotations

from typing import Any

from lxml import etree

MODEL_URIS = {
    "http://www.omg.org/spec/DMN/20151101/dmn.xsd": "1.1",
    "http://www.omg.org/spec/DMN/20180521/MODEL/": "1.2",
    "https://www.omg.org/spec/DMN/20191111/MODEL/": "1.3",
    "https://www.omg.org/spec/DMN/20211108/MODEL/": "1.4",
    "https://www.omg.org/spec/DMN/20230324/MODEL/": "1.5",
}
DMN13 = "https://www.omg.org/spec/DMN/20191111/MODEL/"
DMNDI13 = "https://www.omg.org/spec/DMN/20191111/DMNDI/"
DC = "http://www.omg.org/spec/DMN/20180521/DC/"
DI = "http://www.omg.org/spec/DMN/20180521/DI/"
_SAME_AS = {
    "http://www.omg.org/spec/DMN/20180521/DMNDI/": DMNDI13,
    "https://www.omg.org/spec/DMN/20211108/DMNDI/": DMNDI13,
    "https://www.omg.org/spec/DMN/20230324/DMNDI/": DMNDI13,
}
WRITE_NSMAP = {None: DMN13, "dmndi": DMNDI13, "dc": DC, "di": DI}
MAX_DEPTH = 60


def split(tag: object) -> tuple[str, str]:
    """Clark name -> (namespace, local); comments and other nodes give ("", "")."""
    if not isinstance(tag, str):
        return "", ""
    if tag.startswith("{"):
        namespace, _, local = tag[1:].partition("}")
        return namespace, local
    return "", tag


def name_of(tag: str) -> str:
    """A stored name: DMN model names bare, others ``{uri}local`` with DI URIs made DMN 1.3's."""
    namespace, local = split(tag)
    if namespace in MODEL_URIS:
        return local
    if not namespace:
        return local if not tag.startswith("{") else tag
    return f"{{{_SAME_AS.get(namespace, namespace)}}}{local}"


def tag_of(name: str) -> str:
    """The Clark tag a stored element name is written with."""
    return name if name.startswith("{") else f"{{{DMN13}}}{name}"


def attr_of(name: str) -> str:
    """The Clark attribute name a stored attribute is written with (bare stays bare)."""
    return name


def attr_name(name: str) -> str:
    namespace, local = split(name)
    if not namespace:
        return local
    return f"{{{_SAME_AS.get(namespace, namespace)}}}{local}"


def to_tree(element: etree._Element, depth: int = 0) -> dict[str, Any]:
    """An element as ``{"tag", "attrs", "text", "children"}`` (comments dropped)."""
    if depth > MAX_DEPTH:
        raise ValueError("XML nested too deeply")
    tree: dict[str, Any] = {"tag": name_of(element.tag)}
    attrs = {attr_name(key): value for key, value in element.attrib.items()}
    if attrs:
        tree["attrs"] = attrs
    if element.text and element.text.strip():
        tree["text"] = element.text
    children = [to_tree(child, depth + 1) for child in element if isinstance(child.tag, str)]
    if children:
        tree["children"] = children
    return tree


def from_tree(tree: dict[str, Any], parent: etree._Element | None = None) -> etree._Element:
    """Build (and append to ``parent``) the element a stored tree describes."""
    tag = tag_of(str(tree["tag"]))
    element = etree.Element(tag) if parent is None else etree.SubElement(parent, tag)
    for key, value in (tree.get("attrs") or {}).items():
        element.set(attr_of(key), str(value))
    if tree.get("text"):
        element.text = str(tree["text"])
    for child in tree.get("children") or []:
        from_tree(child, element)
    return element
