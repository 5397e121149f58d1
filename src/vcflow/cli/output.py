"""Printers for `get` (and `describe`'s tables), writing to a given stream, kubectl style.

Tables are plain: upper-case headers, columns padded to their widest cell and separated by
three spaces, no trailing blanks; control characters in a cell are escaped (`\\x1b`), so a
name or message cannot move the cursor or retitle the terminal. `-o yaml|json` print the
object (a `kind: List` when several), `-o name` prints `<kind>.<group>/<name>`,
`-o jsonpath=TEMPLATE` the template on the same object or List (`jsonpath.py`), and
`-o custom-columns=HEADER:PATH,...` a table of those paths (a missing value `<none>`, as
kubectl prints it). `parse` reads the `-o` value: a bad one is a usage error naming it.
Ages are kubectl's (`api.ages`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TextIO

import typer

from vcflow.api import loading, printable
from vcflow.api.meta import Resource
from vcflow.cli import jsonpath, kinds


class Format(StrEnum):
    """The `-o` values; a table when none is given."""

    YAML = "yaml"
    JSON = "json"
    WIDE = "wide"
    NAME = "name"
    JSONPATH = "jsonpath"
    CUSTOM_COLUMNS = "custom-columns"


#: What `--help` and a bad `-o` say the values are.
FORMATS = "yaml, json, name, wide, jsonpath=TEMPLATE or custom-columns=HEADER:PATH,..."


@dataclass(frozen=True)
class CustomColumn:
    header: str
    path: jsonpath.Path


@dataclass(frozen=True)
class Output:
    """A parsed `-o` value: the format, and its template or columns."""

    format: Format | None  # None: the table
    template: jsonpath.Template | None = None
    columns: tuple[CustomColumn, ...] = ()

    @property
    def tabular(self) -> bool:
        """A table: the default one, `-o wide` or `-o custom-columns`."""
        return self.format in (None, Format.WIDE, Format.CUSTOM_COLUMNS)


TABLE = Output(None)
OPTION = "'-o' / '--output'"


def parse(value: str | None) -> Output:
    """The `-o` value as an Output; a usage error (exit 2) in one line if it is not one."""
    if value is None:
        return TABLE
    text = value.removeprefix("=")  # `-o=json`, as kubectl's flags take it
    name, equals, argument = text.partition("=")
    try:
        fmt = Format(name)
    except ValueError:
        raise typer.BadParameter(
            f'unknown output format "{text}": use {FORMATS}', param_hint=OPTION
        ) from None
    if fmt in (Format.JSONPATH, Format.CUSTOM_COLUMNS):
        if not argument.strip():
            what = "template" if fmt is Format.JSONPATH else "custom columns"
            raise typer.BadParameter(
                f"{fmt} format specified but no {what} given: use -o {fmt}=...",
                param_hint=OPTION,
            )
        try:
            if fmt is Format.JSONPATH:
                return Output(fmt, template=jsonpath.template(argument))
            return Output(fmt, columns=custom_columns(argument))
        except jsonpath.TemplateError as exc:
            raise typer.BadParameter(str(exc), param_hint=OPTION) from None
    if equals:
        raise typer.BadParameter(f'"{name}" takes no "={argument}"', param_hint=OPTION)
    return Output(fmt)


def custom_columns(spec: str) -> tuple[CustomColumn, ...]:
    """`NAME:.metadata.name,PHASE:.status.state.phase` → its columns (commas inside
    brackets do not split)."""
    found = []
    for part in _split_outside_brackets(spec):
        header, colon, expression = part.partition(":")
        if not colon or not header.strip() or not expression.strip():
            raise jsonpath.TemplateError(
                f'unexpected custom-columns spec "{part}": expected <header>:<json-path-expr>'
            )
        found.append(CustomColumn(header.strip(), jsonpath.relaxed(expression)))
    return tuple(found)


def _split_outside_brackets(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth <= 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def custom_cells(data: dict[str, Any], cols: Sequence[CustomColumn]) -> list[str]:
    """One row of `-o custom-columns`: each path's values joined by `,`, `<none>` if none,
    printed as kubectl prints them (`go_text`)."""
    cells = []
    for col in cols:
        values = col.path.values(data)
        cells.append(",".join(go_text(v) for v in values) if values else "<none>")
    return cells


def go_text(value: Any) -> str:
    """A value as kubectl's custom-columns prints it (Go's `%v`): `map[k:v]`, `[a b]`."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_text(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_text(v) for v in value) + "]"
    return str(value)


def sort_key(path: jsonpath.Path) -> Any:
    """The key `--sort-by` orders objects by: the path's first value; numbers by value, text
    by text; an object without the field first."""

    def key(obj: Resource) -> tuple[int, Any]:
        values = path.values(obj.to_dict())
        if not values or values[0] is None:
            return (0, 0)
        value = values[0]
        if isinstance(value, bool):
            return (1, int(value))
        if isinstance(value, int | float):
            return (2, value)
        if isinstance(value, str):
            return (3, value)
        return (4, json.dumps(value, sort_keys=True))

    return key


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


def serialized(objects: Sequence[Resource], fmt: Output, *, single: bool, out: TextIO) -> None:
    """`-o yaml`, `-o json`, `-o name` or `-o jsonpath=...` of the objects."""
    if fmt.template is not None:
        out.write(fmt.template.render(wire(objects, single=single)))
    elif fmt.format is Format.NAME:
        for obj in objects:
            out.write(kinds.of(obj).ref(obj.name) + "\n")
    elif fmt.format is Format.JSON:
        out.write(json.dumps(wire(objects, single=single), indent=4, ensure_ascii=False) + "\n")
    else:
        out.write(loading.dump_yaml(wire(objects, single=single)))


class Documents:
    """kubectl `get -w`'s `-o yaml|json|name|jsonpath`: each object, of the list and of each
    change after it, printed on its own as one object (not a List), YAML's a `---` apart."""

    def __init__(self, fmt: Output, out: TextIO) -> None:
        self.fmt, self.out = fmt, out
        self.count = 0

    def write(self, obj: Resource) -> None:
        if self.count and self.fmt.format is Format.YAML:
            self.out.write("---\n")
        serialized([obj], self.fmt, single=True, out=self.out)
        self.count += 1
