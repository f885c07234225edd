"""Vendor extensions (Camunda 7/8, Flowable, Activiti, Spiff): read into config and written back,
one module per setting family.

Each reader takes one BPMN element and returns the config keys it could derive; whatever it reads
only approximately is reported through `warn(code, message)`.
"""

from .common import NAMESPACES, VENDOR_NAMES, Warn, find_extension, vendor_attr
from .decisions import business_rule_task_config
from .elements import start_event_config, user_task_config
from .mappings import input_parameters
from .scripts import script_task_config
from .tools import iso_duration, iso_seconds, service_task_config
from .writeback import (
    WRITTEN_BACK,
    export_namespaces,
    export_settings,
    refresh_written_back,
    refreshed_xml,
    write_back,
)

__all__ = [
    "NAMESPACES",
    "VENDOR_NAMES",
    "WRITTEN_BACK",
    "Warn",
    "business_rule_task_config",
    "export_namespaces",
    "export_settings",
    "find_extension",
    "input_parameters",
    "iso_duration",
    "iso_seconds",
    "refresh_written_back",
    "refreshed_xml",
    "script_task_config",
    "service_task_config",
    "start_event_config",
    "user_task_config",
    "vendor_attr",
    "write_back",
]
