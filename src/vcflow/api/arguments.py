"""A flow's arguments (docs/flow-features.md section 10): their bounds, the values given at
submit time (`-p NAME=VALUE`, `vcflow.run(arguments=...)`) written into the flows that
declare them, and the `VCFLOW_ARGS` value a job sees (section 11). Pure.

A given value replaces the declared one in the object that is stored, so the flow holds the
values it ran with (`describe`, `retry` and a restarted controller see them). A name that no
flow declares is a usage error (`ArgumentError`, exit 2) with the closest declared name.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence

from vcflow.api.errors import ArgumentError
from vcflow.api.jobflow import Argument, JobFlow

#: The most arguments a flow declares.
MAX_ARGUMENTS = 64
#: The longest argument name (characters); a name is a CEL identifier (`NAME`).
NAME_MAX = 63
#: The largest value of one argument, in bytes (UTF-8).
VALUE_MAX = 4 * 1024
#: The largest values of one flow's arguments together, in bytes (UTF-8).
VALUES_MAX = 32 * 1024
#: The longest description of an argument, in bytes (UTF-8).
DESCRIPTION_MAX = 1024
#: A CEL identifier: what `args.NAME` may name in an expression (section 13).
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: CEL's keywords and reserved words: no identifier, so never an argument's name.
RESERVED = frozenset(
    {
        "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
        "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
        "void", "while",
    }
)  # fmt: skip
#: The environment variable that carries the arguments into every container (section 11).
ENV_ARGS = "VCFLOW_ARGS"


def parse_given(texts: Iterable[str]) -> dict[str, str]:
    """`NAME=VALUE` texts (the value may hold `=`) → name → value, in order; ArgumentError
    for a text without a name or `=`, or a name given twice."""
    given: dict[str, str] = {}
    for text in texts:
        name, equals, value = text.partition("=")
        if not equals or not name:
            raise ArgumentError(f"{text!r} is not NAME=VALUE (as in threshold=0.9)")
        if name in given:
            raise ArgumentError(f"{name} is given twice ({given[name]!r} and {value!r})")
        given[name] = value
    return given


def give(flows: Sequence[JobFlow], values: Mapping[str, str]) -> None:
    """Write each given value into every flow that declares its name, then ArgumentError
    for a value that is not a string or a name none of them declares (with the closest
    declared name)."""
    for name, value in values.items():
        if not isinstance(value, str):
            raise ArgumentError(
                f"argument {name!r}: the value must be a string, not {type(value).__name__}"
            )
    declared: list[str] = []
    for flow in flows:
        for argument in declared_arguments(flow):
            declared.append(argument.name)
            if argument.name in values:
                argument.value = values[argument.name]
    known = set(declared)
    for name in values:
        if name not in known:
            raise ArgumentError(unknown_message(name, declared))


def unknown_message(name: str, declared: Sequence[str]) -> str:
    """`unknown argument "treshold"; did you mean "threshold"?`"""
    if not declared:
        return f'unknown argument "{name}": no flow declares arguments (spec.arguments)'
    close = difflib.get_close_matches(name, list(dict.fromkeys(declared)), n=1)
    if close:
        return f'unknown argument "{name}"; did you mean "{close[0]}"?'
    listed = ", ".join(sorted(set(declared)))
    return f'unknown argument "{name}" (the flows declare: {listed})'


def declared_arguments(flow: JobFlow) -> list[Argument]:
    if flow.spec is None or flow.spec.arguments is None:
        return []
    return flow.spec.arguments


def values_of(flow: JobFlow) -> dict[str, str]:
    """Each argument's value, in declaration order (the first of a name; "" if it has none:
    admission refuses such a flow, one stored before is not failed for it)."""
    found: dict[str, str] = {}
    for argument in declared_arguments(flow):
        found.setdefault(argument.name, argument.value or "")
    return found


def env_value(flow: JobFlow) -> str:
    """`VCFLOW_ARGS`: one JSON object of strings, compact, non-ASCII kept. A `$` that the
    kubelet's `$(VAR)` expansion would read (before `(` or another `$`) is doubled, so the
    process sees the JSON as it is written, on a cluster and locally alike."""
    text = json.dumps(values_of(flow), ensure_ascii=False, separators=(",", ":"))
    return escape_expansion(text)


def escape_expansion(text: str) -> str:
    out: list[str] = []
    for i, char in enumerate(text):
        out.append(char)
        if char == "$" and i + 1 < len(text) and text[i + 1] in "$(":
            out.append("$")
    return "".join(out)


def size(text: str | None) -> int:
    """Bytes of `text` in UTF-8 (what the bounds count)."""
    return len(text.encode("utf-8", "surrogatepass")) if text else 0
