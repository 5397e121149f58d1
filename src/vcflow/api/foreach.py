"""An entry's fan-out `for` (docs/flow-features.md section 19): where its items come from,
their bound, and what a job sees of its item. Pure; admission and the controller share it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from vcflow.api import jsontext
from vcflow.api.jobflow import ForEach

#: The most items of one entry.
MAX_ITEMS = 10_000
#: The variables a job of an item gets (section 19).
ENV_ITEM = "VCFLOW_ITEM"
ENV_INDEX = "VCFLOW_INDEX"
#: Why an entry's items could not be had (its entry fails), or there were none (skipped).
ITEMS_INVALID = "ItemsInvalid"
NO_ITEMS = "NoItems"


class ItemsError(ValueError):
    """The items of a `for` cannot be had: the message says why, in one line."""


def source_count(spec: ForEach) -> int:
    """How many of `items`, `fromArgument`, `fromOutput` are given (one is right)."""
    return sum(x is not None for x in (spec.items, spec.from_argument, spec.from_output))


def split_output(text: str) -> tuple[str, str] | None:
    """`TARGET.KEY` → (TARGET, KEY); None when it is not of that form."""
    target, dot, key = text.partition(".")
    return (target, key) if dot and target and key else None


def items_of(spec: ForEach, args: Mapping[str, str], outputs: Mapping[str, Any]) -> list[Any]:
    """The items: the list given, the argument's value parsed as JSON, or the target's
    output (`outputs`: target → its outputs). ItemsError for a value that is not a JSON
    list or has more than MAX_ITEMS items."""
    if spec.items is not None:
        found: Any = spec.items
        where = "items"
    elif spec.from_argument is not None:
        name = spec.from_argument
        if name not in args:
            raise ItemsError(f"fromArgument: no argument {name!r}")
        try:
            found = json.loads(args[name])
        except ValueError as exc:
            raise ItemsError(f"fromArgument {name}: not JSON ({exc})") from None
        where = f"argument {name}"
    elif spec.from_output is not None:
        pair = split_output(spec.from_output)
        if pair is None:
            raise ItemsError(f"fromOutput {spec.from_output!r} is not TARGET.KEY")
        target, key = pair
        given = outputs.get(target)
        if not isinstance(given, Mapping) or key not in given:
            raise ItemsError(f"fromOutput {spec.from_output}: {target}'s outputs have no {key!r}")
        found = given[key]
        where = f"output {spec.from_output}"
    else:
        raise ItemsError("for has no items, fromArgument or fromOutput")
    if not isinstance(found, list):
        raise ItemsError(f"{where} is not a JSON list (it is {jsontext.kind(found)})")
    if len(found) > MAX_ITEMS:
        raise ItemsError(f"{where} has {len(found):,} items, more than {MAX_ITEMS:,}")
    return found


def item_env(item: Any) -> str:
    """`VCFLOW_ITEM`: a string item as it is, any other as compact JSON."""
    return jsontext.compact_text(item)
