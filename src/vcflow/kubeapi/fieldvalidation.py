"""Kubernetes' `fieldValidation` (kubectl's `--validate`): what a write does with the fields
no schema knows, which admission reports as warnings of reason `Cause.UNKNOWN_FIELD`
(`unknown_field`): Strict makes them errors, Warn says them, Ignore drops them, as
kube-apiserver does. The rule selects by that reason, never by the words. Used by the
vcflow server and the webhook (`split`), and the CLI and `vcflow.run` (`judged`). Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from enum import StrEnum

from vcflow.api.errors import Cause, FieldError

#: how an unknown field's warning begins (kubectl's and kube-apiserver's words)
UNKNOWN_FIELD = 'unknown field "'


class Validation(StrEnum):
    """What to do with unknown fields (kubectl's `--validate`, the API's `fieldValidation`)."""

    STRICT = "strict"
    WARN = "warn"
    IGNORE = "ignore"

    @property
    def api(self) -> str:
        """The value as the API's `fieldValidation` parameter spells it."""
        return self.value.capitalize()


#: the values the API's `fieldValidation` parameter takes
API_VALUES = tuple(v.api for v in Validation)


def of_api(text: object) -> Validation:
    """The validation a `fieldValidation` value asks for; the API server's default, Warn,
    for none (or one it does not know)."""
    found = {v.api: v for v in Validation}.get(text) if isinstance(text, str) else None
    return found or Validation.WARN


def unknown_field(path: str, hint: str = "") -> FieldError:
    """The warning for a field no schema knows, at `path`."""
    return FieldError(
        f'{UNKNOWN_FIELD}{path}"', path, hint=hint, warning=True, reason=Cause.UNKNOWN_FIELD
    )


def is_unknown(error: FieldError) -> bool:
    """Is `error` an unknown field's warning?"""
    return error.warning and error.reason == Cause.UNKNOWN_FIELD


def judged(found: Sequence[FieldError], validation: Validation) -> list[FieldError]:
    """Admission's problems with the unknown-field warnings made errors (`strict`), kept
    (`warn`) or left out (`ignore`), in their order."""
    if validation is Validation.WARN:
        return list(found)
    if validation is Validation.IGNORE:
        return [e for e in found if not is_unknown(e)]
    return [dataclasses.replace(e, warning=False) if is_unknown(e) else e for e in found]


def split(
    found: Sequence[FieldError], validation: Validation
) -> tuple[list[FieldError], list[FieldError]]:
    """A write's (errors, warnings) as an API server judges them: admission's errors
    first, then the unknown fields Strict refuses."""
    kept = judged(found, validation)
    errors = [e for e in kept if not e.warning]
    errors.sort(key=lambda e: e.reason == Cause.UNKNOWN_FIELD)
    return errors, [e for e in kept if e.warning]
