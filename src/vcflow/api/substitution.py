"""`${{ args.NAME }}` and `${{ outputs.ENTRY.KEY }}` in a JobTemplate's strings: the flow
language's way into the fields environment variables cannot reach — an image tag, a
resource request (docs/flow-features.md section 15). Pure.

Only a reference whose root is `args` or `outputs` is replaced (`item` and `index` are kept
for the fan-out); any other `${{ ... }}` stays as written, and `$${{` writes a literal `${{`.
A flow that does not use the flow language is never substituted, so a `${{` in an existing
manifest keeps its meaning. A string value replaces its reference as it is; any other JSON
value as its compact JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

#: `$${{` (a literal `${{`), or one reference: `${{ root.path }}`
PATTERN = re.compile(r"\$\$\{\{|\$\{\{\s*([^{}]*?)\s*\}\}")
#: the roots replaced now; the reserved ones are the fan-out's, left as written until then
ROOTS = frozenset({"args", "outputs"})
RESERVED = frozenset({"item", "index"})
#: at most this many references in one vcjob's spec
MAX_REFERENCES = 256


class SubstitutionError(ValueError):
    """A reference that cannot be resolved (the message names it)."""


@dataclass(frozen=True)
class Reference:
    """`args.threshold` → ("args", ("threshold",)); `outputs.evaluate.accuracy` →
    ("outputs", ("evaluate", "accuracy"))."""

    text: str
    root: str
    path: tuple[str, ...]

    def problem(self) -> str:
        """What is wrong with its form ("" when nothing is)."""
        if self.root == "args" and len(self.path) != 1:
            return f"${{{{ {self.text} }}}}: an argument is args.NAME"
        if self.root == "outputs" and len(self.path) != 2:
            return f"${{{{ {self.text} }}}}: an output is outputs.ENTRY.KEY"
        return ""


def references(text: str) -> Iterator[Reference]:
    """The references of `args` and `outputs` in `text` (not the escaped ones)."""
    for match in PATTERN.finditer(text):
        ref = _reference(match)
        if ref is not None:
            yield ref


def has_any(text: str) -> bool:
    return "${{" in text


def is_one_reference(text: str) -> bool:
    """Is `text` exactly one reference (what a quantity field may hold in a template)?"""
    match = PATTERN.fullmatch(text.strip())
    return match is not None and _reference(match) is not None


def substitute(data: Any, args: Mapping[str, str], outputs: Mapping[str, Mapping[str, Any]]) -> Any:
    """`data` (wire form: dicts, lists, strings) with every reference replaced; a new
    object where anything changed. SubstitutionError for one that cannot be resolved."""
    count = [0]

    def text(value: str) -> str:
        if "${{" not in value:
            return value

        def one(match: re.Match[str]) -> str:
            if match.group(0) == "$${{":
                return "${{"
            ref = _reference(match)
            if ref is None:
                return match.group(0)
            count[0] += 1
            if count[0] > MAX_REFERENCES:
                raise SubstitutionError(f"more than {MAX_REFERENCES} references in one job")
            return _value(ref, args, outputs)

        return PATTERN.sub(one, value)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return text(value)
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(data)


def _reference(match: re.Match[str]) -> Reference | None:
    inner = match.group(1)
    if inner is None:
        return None
    root, _, rest = inner.partition(".")
    if root not in ROOTS:
        return None
    return Reference(inner, root, tuple(rest.split(".")) if rest else ())


def _value(ref: Reference, args: Mapping[str, str], outputs: Mapping[str, Any]) -> str:
    problem = ref.problem()
    if problem:
        raise SubstitutionError(problem)
    if ref.root == "args":
        (name,) = ref.path
        if name not in args:
            raise SubstitutionError(f"${{{{ {ref.text} }}}}: no argument {name!r}")
        return args[name]
    entry, key = ref.path
    if entry not in outputs:
        raise SubstitutionError(
            f"${{{{ {ref.text} }}}}: {entry!r} is not a target with outputs of this entry"
        )
    given = outputs[entry]
    if key not in given:
        raise SubstitutionError(f"${{{{ {ref.text} }}}}: {entry}'s outputs have no {key!r}")
    value = given[key]
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
