"""`${{ args.NAME }}` and `${{ outputs.ENTRY.KEY }}` in a JobTemplate's strings: the flow
language's way into the fields environment variables cannot reach — an image tag, a
resource request (docs/flow-features.md section 15). Pure.

Only a reference whose root is `args` or `outputs` is replaced, and, for an item of an
entry with `for` (section 19), `item` (`${{ item }}`, `${{ item.KEY.KEY }}`) and `index`;
any other `${{ ... }}` stays as written (`item` and `index` too when no item is given),
and `$${{` writes a literal `${{`.
A flow that does not use the flow language is never substituted, so a `${{` in an existing
manifest keeps its meaning. A string value replaces its reference as it is; any other JSON
value as its compact JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from vcflow.api import jsontext

#: `$${{` (a literal `${{`), or one reference: `${{ root.path }}`
PATTERN = re.compile(r"\$\$\{\{|\$\{\{\s*([^{}]*?)\s*\}\}")
#: the roots replaced in every vcjob of a flow that uses the language
ROOTS = frozenset({"args", "outputs"})
#: the fan-out's roots: replaced in an item's vcjob, left as written elsewhere
RESERVED = frozenset({"item", "index"})
ALL_ROOTS = ROOTS | RESERVED
#: at most this many references in one vcjob's spec
MAX_REFERENCES = 256


class _NoItem:
    """`substitute`'s `item` when not given (an item may be any JSON value, null included)."""

    def __repr__(self) -> str:
        return "NO_ITEM"


NO_ITEM: Any = _NoItem()


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
        if self.root == "item" and not all(self.path):
            return f"${{{{ {self.text} }}}}: an item is item or item.KEY (KEY.KEY... in objects)"
        if self.root == "index" and self.path:
            return f"${{{{ {self.text} }}}}: the item's index is index"
        if self.root == "args" and (len(self.path) != 1 or not self.path[0]):
            return f"${{{{ {self.text} }}}}: an argument is args.NAME"
        if self.root == "outputs" and (len(self.path) != 2 or not all(self.path)):
            return f"${{{{ {self.text} }}}}: an output is outputs.ENTRY.KEY"
        return ""


def references(text: str, roots: frozenset[str] = ROOTS) -> Iterator[Reference]:
    """The references of `roots` (`args` and `outputs`; `ALL_ROOTS`: `item` and `index`
    too) in `text` (not the escaped ones)."""
    for match in PATTERN.finditer(text):
        ref = _reference(match, roots)
        if ref is not None:
            yield ref


def has_any(text: str) -> bool:
    return "${{" in text


def is_one_reference(text: str) -> bool:
    """Is `text` exactly one reference (what a quantity field may hold in a template),
    `${{ item.cpu }}` included?"""
    match = PATTERN.fullmatch(text.strip())
    return match is not None and _reference(match, ALL_ROOTS) is not None


def substitute(
    data: Any,
    args: Mapping[str, str],
    outputs: Mapping[str, Mapping[str, Any]],
    *,
    item: Any = NO_ITEM,
    index: int | None = None,
) -> Any:
    """`data` (wire form: dicts, lists, strings) with every reference replaced; a new
    object where anything changed. SubstitutionError for one that cannot be resolved.
    `item` (any JSON value) and `index`: an item's vcjob's; without them `${{ item }}` and
    `${{ index }}` stay as written."""
    count = [0]
    roots = set(ROOTS)
    if item is not NO_ITEM:
        roots.add("item")
    if index is not None:
        roots.add("index")
    replaced = frozenset(roots)

    def text(value: str) -> str:
        if "${{" not in value:
            return value

        def one(match: re.Match[str]) -> str:
            if match.group(0) == "$${{":
                return "${{"
            ref = _reference(match, replaced)
            if ref is None:
                return match.group(0)
            count[0] += 1
            if count[0] > MAX_REFERENCES:
                raise SubstitutionError(f"more than {MAX_REFERENCES} references in one job")
            if ref.root == "item":
                return _item_value(ref, item)
            if ref.root == "index":
                if ref.path:
                    raise SubstitutionError(ref.problem())
                return str(index)
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


def _reference(match: re.Match[str], roots: frozenset[str]) -> Reference | None:
    inner = match.group(1)
    if inner is None:
        return None
    root, dot, rest = inner.partition(".")
    if root not in roots:
        return None
    return Reference(inner, root, tuple(rest.split(".")) if dot else ())


def _item_value(ref: Reference, item: Any) -> str:
    """`${{ item }}` or `${{ item.KEY... }}`: a string as it is, any other as compact JSON."""
    problem = ref.problem()
    if problem:
        raise SubstitutionError(problem)
    value = item
    for depth, key in enumerate(ref.path):
        if not isinstance(value, dict):
            where = ".".join(("item", *ref.path[:depth]))
            raise SubstitutionError(
                f"${{{{ {ref.text} }}}}: {where} is {jsontext.kind(value)}, "
                f"not an object with {key!r}"
            )
        if key not in value:
            where = ".".join(("item", *ref.path[:depth]))
            raise SubstitutionError(f"${{{{ {ref.text} }}}}: {where} has no {key!r}")
        value = value[key]
    return jsontext.compact_text(value)


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
    return jsontext.compact_text(given[key])
