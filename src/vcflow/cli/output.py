"""Printers for `get` (and `describe`'s tables), writing to a given stream, kubectl style.

Tables are plain: upper-case headers, columns padded to their widest cell and separated by
three spaces, no trailing blanks; control characters in a cell are escaped (`\\x1b`), so a
name or message cannot move the cursor or retitle the terminal. `-o yaml|json` print the
object (a `kind: List` when several), `-o name` prints `<kind>.<group>/<name>`. Ages are
kubectl's (`HumanDuration`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any, TextIO

from vcflow.api import clock, loading, printable
from vcflow.api.meta import Resource
from vcflow.cli import kinds

UNKNOWN = "<unknown>"


class Format(StrEnum):
    """The `-o` values; a table when none is given."""

    YAML = "yaml"
    JSON = "json"
    WIDE = "wide"
    NAME = "name"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], out: TextIO) -> None:
    """Aligned columns under upper-case headers; the last column is not padded."""
    for line in aligned([h.upper() for h in headers], rows):
        out.write(line + "\n")


def aligned(headers: Sequence[str], rows: Sequence[Sequence[str]], *, gap: int = 3) -> list[str]:
    """The lines of a table: every column as wide as its widest cell, `gap` blanks apart."""
    lines = [list(headers), *[[printable.escaped(c) for c in r] for r in rows]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(headers))]
    return [
        (" " * gap).join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    ]


def age(timestamp: str | None, now: datetime) -> str:
    """kubectl's age of an RFC 3339 time: `45s`, `3m12s`, `17m`, `5h3m`, `9h`, `3d4h`, `12d`."""
    if not timestamp:
        return UNKNOWN
    try:
        since = clock.parse_rfc3339(timestamp)
    except ValueError:
        return UNKNOWN
    return human_duration((now - since).total_seconds())


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery `duration.HumanDuration`, rule for rule."""
    total = int(seconds)
    if total < -1:
        return "<invalid>"
    if total < 0:
        return "0s"
    if total < 120:
        return f"{total}s"
    minutes = total // 60
    if minutes < 10:
        return _pair(minutes, "m", total % 60, "s")
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return _pair(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        return _pair(days, "d", hours % 24, "h")
    if hours < 24 * 365 * 2:
        return f"{days}d"
    if hours < 24 * 365 * 8:
        return _pair(days // 365, "y", days % 365, "d")
    return f"{days // 365}y"


def _pair(big: int, big_unit: str, small: int, small_unit: str) -> str:
    return f"{big}{big_unit}" if small == 0 else f"{big}{big_unit}{small}{small_unit}"


def wire(objects: Sequence[Resource], *, single: bool) -> dict[str, Any]:
    """One object's wire dict, or kubectl's `kind: List` of several (also of one or none,
    unless `single`)."""
    if single and len(objects) == 1:
        return objects[0].to_dict()
    return {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [obj.to_dict() for obj in objects],
    }


def serialized(objects: Sequence[Resource], fmt: Format, *, single: bool, out: TextIO) -> None:
    """`-o yaml`, `-o json` or `-o name` of the objects."""
    if fmt is Format.NAME:
        for obj in objects:
            out.write(kinds.of(obj).ref(obj.name) + "\n")
    elif fmt is Format.JSON:
        out.write(json.dumps(wire(objects, single=single), indent=4, ensure_ascii=False) + "\n")
    else:
        out.write(loading.dump_yaml(wire(objects, single=single)))
