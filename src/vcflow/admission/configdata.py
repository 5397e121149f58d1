"""The API server's rules for a ConfigMap's and a Secret's keys and values, with its
messages: keys are `[-._a-zA-Z0-9]+` (not `.` or `..`), a ConfigMap key is in `data` or
`binaryData`, not both, and base64 fields decode. Called by `review`. Pure."""

from __future__ import annotations

import re

from vcflow.api import config
from vcflow.api.errors import FieldError
from vcflow.api.meta import Resource

_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_KEY_MESSAGE = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
    "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')"
)


def validate(obj: Resource) -> list[FieldError]:
    """The problems of a ConfigMap or Secret; [] for any other kind."""
    if isinstance(obj, config.ConfigMap):
        found = _keys(obj.data, "data") + _keys(obj.binary_data, "binaryData")
        found += _base64(obj.binary_data, "binaryData")
        for key in sorted(set(obj.data or {}) & set(obj.binary_data or {})):
            found.append(
                FieldError(
                    f'Invalid value: "{key}": duplicate of key present in data',
                    f"binaryData[{key}]",
                )
            )
        return found
    if isinstance(obj, config.Secret):
        found = _keys(obj.data, "data") + _keys(obj.string_data, "stringData")
        return found + _base64(obj.data, "data")
    return []


def _keys(data: dict[str, str] | None, field: str) -> list[FieldError]:
    found = []
    for key in data or {}:
        if not _KEY.match(key) or key in (".", ".."):
            problem = "must not be '.' or '..'" if key in (".", "..") else _KEY_MESSAGE
            found.append(FieldError(f'Invalid value: "{key}": {problem}', f"{field}[{key}]"))
    return found


def _base64(data: dict[str, str] | None, field: str) -> list[FieldError]:
    found = []
    for key, text in (data or {}).items():
        try:
            config.decode(text, f"{field}[{key}]")
        except ValueError:
            found.append(FieldError("illegal base64 data", f"{field}[{key}]"))
    return found
