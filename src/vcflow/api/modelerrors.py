"""pydantic's validation errors in the Kubernetes API server's words: one per field, with
the field's path in the data (`spec.flows[2].name`) and a message such as `Invalid value:
"x": must be of type integer` or `Required value`; pydantic's own text never shows. Used by
`loading` (schema errors of manifests) and the CLI's `patch`. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pydantic


def schema_errors(
    exc: pydantic.ValidationError, data: Any
) -> list[tuple[str, tuple[str | int, ...], str]]:
    """pydantic's errors in Kubernetes' words: (field path, data location, message).

    Union branches are folded into one error per field; pydantic's raw text never shows.
    """
    grouped: dict[tuple[str | int, ...], list[dict[str, Any]]] = {}
    for error in exc.errors(include_url=False):
        loc = _data_loc(error["loc"], data, error["type"])
        grouped.setdefault(loc, []).append(dict(error))
    out = []
    for loc, errors in grouped.items():
        out.append((format_path(loc), loc, _message(errors)))
    return out


def _data_loc(loc: Sequence[str | int], data: Any, err_type: str) -> tuple[str | int, ...]:
    """Keep only the parts of pydantic's loc that index the data (drop union tags)."""
    out: list[str | int] = []
    current = data
    for i, part in enumerate(loc):
        if isinstance(current, dict) and part in current:
            out.append(part)
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            out.append(part)
            current = current[part]
        elif i == len(loc) - 1 and err_type == "missing" and isinstance(part, str):
            out.append(part)
    return tuple(out)


def format_path(loc: Sequence[str | int]) -> str:
    """`("spec", "flows", 2, "name")` → `spec.flows[2].name`."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


_TYPE_WORDS = {
    "string_type": "string",
    "int_type": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "bool_type": "boolean",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
}


def _message(errors: list[dict[str, Any]]) -> str:
    types = [e["type"] for e in errors]
    first = errors[0]
    if "missing" in types:
        return "Required value"
    words = [_TYPE_WORDS[t] for t in types if t in _TYPE_WORDS]
    if words and len(words) == len(types):
        shown = _short(first.get("input"))
        return f"Invalid value: {shown}: must be of type {' or '.join(dict.fromkeys(words))}"
    for e in errors:
        if e["type"] in ("enum", "literal_error"):
            expected = e.get("ctx", {}).get("expected", "")
            values = ", ".join(
                '"' + v.strip().strip("'") + '"'
                for v in str(expected).replace(" or ", ", ").split(",")
            )
            return f'Unsupported value: "{e.get("input")}": supported values: {values}'
    msg = str(first.get("msg", "invalid value"))
    return msg.removeprefix("Value error, ")


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."
