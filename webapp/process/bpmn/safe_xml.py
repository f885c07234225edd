"""Parse untrusted XML safely: size limit, no DTDs or entities, no network, line-numbered errors.

defusedxml (expat) screens the bytes first and refuses any DOCTYPE, so entity expansion
(billion laughs) and external entities (XXE) never happen; lxml then parses the same bytes
with entity resolution and network access off, to get line numbers for every element.
"""

from __future__ import annotations

import re
from xml.etree.ElementTree import ParseError

import defusedxml
from defusedxml import ElementTree as SafeElementTree
from lxml import etree

from .model import BpmnImportError

_ENCODING_DECLARATION = re.compile(rb"^(\s*<\?xml[^>]*?)\s+encoding\s*=\s*([\"'])[^\"']*\2")
_EXPAT_POSITION = re.compile(r":\s*line \d+, column \d+$")


def to_bytes(data: bytes | str) -> bytes:
    """Return the document as bytes; text input is re-encoded as UTF-8 (its declaration dropped)."""
    if isinstance(data, bytes):
        return data
    if not isinstance(data, str):
        raise BpmnImportError(f"Expected bytes or text, not {type(data).__name__}")
    encoded = data.encode("utf-8", "surrogatepass")
    return _ENCODING_DECLARATION.sub(rb"\1", encoded, count=1)


def parse(data: bytes | str, *, max_bytes: int) -> etree._Element:
    """Parse `data` into an lxml element tree root, or raise `BpmnImportError` saying why not."""
    raw = to_bytes(data)
    if len(raw) > max_bytes:
        raise BpmnImportError(
            f"The file is {len(raw):,} bytes; the limit for BPMN import is {max_bytes:,} bytes"
        )
    if not raw.strip():
        raise BpmnImportError("The file is empty")
    try:
        SafeElementTree.fromstring(raw, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except defusedxml.DefusedXmlException as exc:
        raise BpmnImportError(
            "The file declares a DTD or XML entities, which BPMN files never need; "
            f"refusing it for safety ({type(exc).__name__})",
            _line_of(raw, b"<!DOCTYPE") or _line_of(raw, b"<!ENTITY"),
        ) from None
    except ParseError as exc:
        line, column = getattr(exc, "position", (None, None))
        reason = _EXPAT_POSITION.sub("", str(exc))
        raise BpmnImportError(
            f"Malformed XML at line {line}, column {column}: {reason}", line
        ) from None
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        huge_tree=False,
        load_dtd=False,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        return etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        message = f"Malformed XML at line {exc.lineno}: {exc.msg}"
        raise BpmnImportError(message, exc.lineno) from None


def _line_of(raw: bytes, needle: bytes) -> int | None:
    index = raw.find(needle)
    return raw.count(b"\n", 0, index) + 1 if index >= 0 else None
