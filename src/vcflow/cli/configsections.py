"""`vcflow describe configmap|secret`: the sections after the common header, as kubectl
prints them — a ConfigMap's keys with their values, a Secret's type and keys with their
sizes only (its values are never printed). Called by `describe.render`."""

from __future__ import annotations

from vcflow.api import config
from vcflow.api.meta import Resource
from vcflow.cli.sections import Text


def config_sections(obj: Resource, text: Text) -> None:
    """Nothing for kinds other than ConfigMap and Secret."""
    if isinstance(obj, config.ConfigMap):
        text.heading("Data")
        for key, value in sorted((obj.data or {}).items()):
            text.lines += [f"{key}:", "----", *value.splitlines(), ""]
        if obj.binary_data:
            text.heading("BinaryData")
            for key, data in sorted(obj.binary_data.items()):
                text.lines.append(f"{key}: {_size(data)} bytes")
    elif isinstance(obj, config.Secret):
        text.fields([("Type", obj.type or config.OPAQUE)])
        text.heading("Data")
        for key, data in sorted((obj.data or {}).items()):
            text.lines.append(f"{key}:  {_size(data)} bytes")


def _size(data: str) -> int:
    try:
        return len(config.decode(data, ""))
    except ValueError:
        return len(data)
