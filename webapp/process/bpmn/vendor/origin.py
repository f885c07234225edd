"""The vendor settings a node came with, kept verbatim under `origin`, so export gives an
untouched node back exactly."""

from __future__ import annotations

from typing import Any

from lxml import etree

from .assignment import assignment_origin
from .common import ORIGIN
from .forms import form_origin
from .mappings import io_origin


def origin_config(
    element: etree._Element, *, assignment: bool = False, form: bool = False, io: bool = False
) -> dict[str, Any]:
    """`{"origin": ...}`: the vendor and the assignment attributes, form elements and input/output
    mapping of `element` as written, so export gives an untouched node back exactly."""
    origin: dict[str, Any] = {}
    for wanted, read in ((assignment, assignment_origin), (form, form_origin), (io, io_origin)):
        found = read(element) if wanted else None
        if found is not None:
            vendor, key, value = found
            origin.setdefault("vendor", vendor)
            origin[key] = value
    return {ORIGIN: origin} if origin else {}
