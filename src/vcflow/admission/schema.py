"""CRD OpenAPI schema checks worded as the Kubernetes API server words them (reference §6.3).

Each helper checks one constraint of one field and returns at most one FieldError; an absent
field (None) always passes, as the schema only validates what the body contains. Pure.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence

from vcflow.api.errors import Cause, FieldError


def _shown(value: object) -> str:
    """A value as the API server prints it in `Invalid value: …` (strings quoted, cut at
    80 characters: a message never copies a whole field)."""
    text = json.dumps(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def minimum(value: int | None, low: int, path: str) -> list[FieldError]:
    if value is None or value >= low:
        return []
    return [
        FieldError(
            f"Invalid value: {value}: {path} in body should be greater than or equal to {low}",
            path,
        )
    ]


def max_length(value: str | None, limit: int, path: str) -> list[FieldError]:
    if value is None or len(value) <= limit:
        return []
    return [FieldError(f"Too long: {path} may not be longer than {limit}", path)]


def min_length(value: str | None, limit: int, path: str) -> list[FieldError]:
    if value is None or len(value) >= limit:
        return []
    return [
        FieldError(
            f"Invalid value: {_shown(value)}: {path} in body should be at least {limit} chars long",
            path,
        )
    ]


def pattern(value: str | None, regex: re.Pattern[str], path: str) -> list[FieldError]:
    """`regex` is the CRD's, shown as written; it is matched as Go's RE2 matches it, where
    `$` ends the text (Python's `$` also matches before a final newline)."""
    if value is None or _as_go(regex).search(value):
        return []
    return [
        FieldError(
            f"Invalid value: {_shown(value)}: {path} in body should match '{regex.pattern}'", path
        )
    ]


@functools.cache
def _as_go(regex: re.Pattern[str]) -> re.Pattern[str]:
    text = regex.pattern
    if text.endswith("$") and not text.endswith("\\$"):
        text = text[:-1] + r"\Z"
    return re.compile(text, regex.flags)


def enum(value: str | None, allowed: Sequence[str], path: str) -> list[FieldError]:
    if value is None or value in allowed:
        return []
    supported = ", ".join(_shown(a) for a in allowed)
    message = f"Unsupported value: {_shown(value)}: supported values: {supported}"
    return [FieldError(message, path, reason=Cause.NOT_SUPPORTED)]


def required(value: object, path: str) -> list[FieldError]:
    return [FieldError("Required value", path)] if value is None else []


def min_items(items: Sequence[object] | None, low: int, path: str) -> list[FieldError]:
    if items is None or len(items) >= low:
        return []
    return [
        FieldError(
            f"Invalid value: {len(items)}: {path} in body should have at least {low} items", path
        )
    ]
