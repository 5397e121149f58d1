"""Printers for `get` (and `describe`'s tables), writing to a given stream, kubectl style.

Tables are plain: upper-case headers, columns padded to their widest cell and separated by
three spaces, no trailing blanks; control characters in a cell are escaped (`\\x1b`), so a
name or message cannot move the cursor or retitle the terminal. `-o yaml|json` print the
object (a `kind: List` when several), `-o name` prints `<kind>.<group>/<name>`. Ages are
kubectl's (`api.ages`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, TextIO

from vcflow.api import loading, printable
from vcflow.api.meta import Resource
from vcflow.cli import kinds


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
