"""JSON as vcflow reads it from users — a `.json` manifest, `vcflow patch -p` — strictly, as
the Kubernetes API server's decoder does: a key twice in one object is refused (as YAML's
are), so are `NaN` and `Infinity` (not JSON), integers longer than `bounds.MAX_DIGITS`,
lone surrogates (`"\\ud800"`: not a character, so it could never be written out) and nesting
past `bounds.MAX_DEPTH`. Each refusal is one `Invalid` with the line where it is, as far as
the text shows it. Pure: parses the text it is given.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vcflow.api import bounds


class Invalid(ValueError):
    """Not JSON vcflow accepts; `str()` says why, `line` (1-based) where, if known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def loads(text: str) -> Any:
    """The value of `text`; Invalid for anything the module docstring refuses."""
    try:
        data = json.loads(
            text, object_pairs_hook=_object, parse_constant=_constant, parse_int=_integer
        )
    except json.JSONDecodeError as exc:
        raise Invalid(exc.msg, exc.lineno) from None
    except RecursionError:
        raise Invalid(bounds.NESTED) from None
    except _Refused as exc:
        raise Invalid(str(exc), _line_of(text, exc.pattern)) from None
    try:
        bounds.measure_data(data)
    except bounds.Exceeded as exc:
        raise Invalid(str(exc)) from None
    if "\\u" in text:  # (only an escape makes a surrogate: UTF-8 text has none)
        problem = bounds.surrogate_in(data)
        if problem is not None:
            raise Invalid(problem, _line_of(text, _LONE_ESCAPE))
    return data


class _Refused(ValueError):
    """Raised from inside the decoder; `pattern` finds the place in the text."""

    def __init__(self, message: str, pattern: re.Pattern[str] | _Nth) -> None:
        super().__init__(message)
        self.pattern = pattern


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                where = re.compile(re.escape(json.dumps(key)) + r"\s*:")
                raise _Refused(f'duplicate key "{key}" in an object', _Nth(where, 2))
            seen.add(key)
    return out


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number", re.compile(rf"(?<![\w\"]){name}"))


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > bounds.MAX_DIGITS:
        message = f"a number of {digits} digits: {bounds.TOO_MANY_DIGITS}"
        raise _Refused(message, re.compile(rf"\d{{{bounds.MAX_DIGITS + 1},}}"))
    return int(text)


#: A `\u` escape of a surrogate that is not half of a pair.
_LONE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


class _Nth:
    """The n-th match of a pattern, as `_line_of` asks for one (`search`)."""

    def __init__(self, pattern: re.Pattern[str], n: int) -> None:
        self.pattern, self.n = pattern, n

    def search(self, text: str) -> re.Match[str] | None:
        found = None
        for match, _ in zip(self.pattern.finditer(text), range(self.n), strict=False):
            found = match
        return found


def _line_of(text: str, pattern: re.Pattern[str] | _Nth) -> int | None:
    found = pattern.search(text)
    return None if found is None else text.count("\n", 0, found.start()) + 1


def kind(value: Any) -> str:
    """What a JSON value is, for a message: `an object`, `a list`, `a string`, `a boolean`,
    `null`, `a number`."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def compact(value: Any) -> str:
    """Compact JSON (separators `,` and `:`), non-ASCII characters as they are: how vcflow
    hands a JSON value to a job (`VCFLOW_ITEM`, `${{ }}`)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def compact_text(value: Any) -> str:
    """A string as it is, any other value as `compact` JSON."""
    return value if isinstance(value, str) else compact(value)
