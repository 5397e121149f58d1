"""Admission of an entry's fan-out `for` (docs/flow-features.md section 19): what can be
known of its items before the flow runs.

- Exactly one source: `items` (at most `foreach.MAX_ITEMS`; empty is allowed: the entry is
  Skipped, NoItems), `fromArgument` (a declared argument whose value is a JSON list of at
  most MAX_ITEMS; a required argument without a value is refused by `arguments` already)
  or `fromOutput` (`TARGET.KEY`, TARGET a target of the entry: its outputs are read when the
  dependencies are met).
- `parallelism` from 1 to 2^31-1; an exit handler (`spec.onExit`) has no `for`.
- An item's vcjob is `<flow>-<entry>-<index>`: another entry named `<entry>-<digits>` is
  refused (at that entry's name); the largest item's vcjob name is checked as any vcjob
  name is, in `jobflow` (`largest_index`).

One line per problem, naming the field. `language.validate` calls `entry_errors` and
`item_names`. Pure.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from vcflow.api import foreach, jsontext
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import Flow, JobFlow
from vcflow.api.printable import quoted

#: The largest `parallelism` (an int32, as Kubernetes' counts are).
MAX_PARALLELISM = 2**31 - 1
#: `<entry>-<digits>`: the name of an item's vcjob under the flow's name.
_ITEM_NAME = re.compile(r"(.+)-([0-9]+)")


def declared_values(flow: JobFlow) -> dict[str, str | None]:
    """Each declared argument's value (the first of a name declared twice)."""
    values: dict[str, str | None] = {}
    for argument in flow.spec.arguments or [] if flow.spec is not None else []:
        values.setdefault(argument.name, argument.value)
    return values


def entry_errors(
    flow: JobFlow, i: int, entry: Flow, values: Mapping[str, str | None]
) -> list[FieldError]:
    """Every problem of the `for` of entry `i` (`values`: `declared_values(flow)`)."""
    spec = entry.for_each
    if spec is None:
        return []
    path = f"spec.flows[{i}].for"
    found: list[FieldError] = []
    if entry.name in flow.exit_handlers:
        found.append(
            FieldError(
                "an exit handler (spec.onExit) runs once, after every other entry has ended; "
                "it may not have for",
                path,
            )
        )
    if foreach.source_count(spec) != 1:
        found.append(FieldError("give exactly one of items, fromArgument, fromOutput", path))
    if spec.items is not None and len(spec.items) > foreach.MAX_ITEMS:
        found.append(
            FieldError(
                f"Too many: {len(spec.items)}: must have at most {foreach.MAX_ITEMS} items",
                f"{path}.items",
            )
        )
    if spec.from_argument is not None:
        problem = _argument_problem(spec.from_argument, values)
        if problem:
            found.append(FieldError(problem, f"{path}.fromArgument"))
    if spec.from_output is not None:
        problem = _output_problem(spec.from_output, entry)
        if problem:
            found.append(FieldError(problem, f"{path}.fromOutput"))
    if spec.parallelism is not None:
        if spec.parallelism < 1:
            found.append(
                FieldError(
                    f"Invalid value: {spec.parallelism}: must be greater than or equal to 1",
                    f"{path}.parallelism",
                )
            )
        elif spec.parallelism > MAX_PARALLELISM:
            found.append(
                FieldError(
                    f"Invalid value: {spec.parallelism}: must be less than or equal to "
                    f"{MAX_PARALLELISM}",
                    f"{path}.parallelism",
                )
            )
    return found


def item_names(flows: Sequence[Flow]) -> list[FieldError]:
    """An entry named `<entry>-<digits>` of an entry with `for` has an item's vcjob name:
    refused at its name. O(entries)."""
    fanned = {entry.name for entry in flows if entry.for_each is not None}
    if not fanned:
        return []
    found: list[FieldError] = []
    for k, entry in enumerate(flows):
        match = _ITEM_NAME.fullmatch(entry.name)
        if match is None or match.group(1) not in fanned:
            continue
        owner = match.group(1)
        found.append(
            FieldError(
                f"entry {quoted(entry.name)} is named as item {match.group(2)} of entry "
                f"{owner}, which has for: their vcjobs would have one name (<flow>-{owner}-"
                "<index>); rename it",
                f"spec.flows[{k}].name",
            )
        )
    return found


def known_items(entry: Flow, values: Mapping[str, str | None]) -> list[Any] | None:
    """The entry's items when admission knows them (`items`, or a `fromArgument` whose
    value is a JSON list), else None."""
    spec = entry.for_each
    if spec is None or foreach.source_count(spec) != 1:
        return None
    if spec.items is not None:
        return spec.items
    if spec.from_argument is not None:
        value = values.get(spec.from_argument)
        parsed = _json(value) if value is not None else None
        return parsed if isinstance(parsed, list) else None
    return None


def largest_index(entry: Flow, values: Mapping[str, str | None]) -> int | None:
    """The index of the entry's last item vcjob: of its items when known, the worst case
    (`MAX_ITEMS - 1`) for `fromOutput`; None without `for`, with no items, or with a
    source refused already (its name is then checked as an entry's without `for`)."""
    spec = entry.for_each
    if spec is None or foreach.source_count(spec) != 1:
        return None
    if spec.from_output is not None:
        return foreach.MAX_ITEMS - 1
    items = known_items(entry, values)
    if items is None or not items or len(items) > foreach.MAX_ITEMS:
        return None
    return len(items) - 1


def _argument_problem(name: str, values: Mapping[str, str | None]) -> str:
    if name not in values:
        said = f"no argument {quoted(name)} is declared (spec.arguments)"
        close = difflib.get_close_matches(name, list(values), n=1)
        return f"{said}; did you mean {quoted(close[0])}?" if close else said
    value = values[name]
    if value is None:
        return ""  # (a required argument without a value is refused by `arguments`)
    parsed = _json(value)
    if isinstance(parsed, _NotJson):
        return f"argument {quoted(name)} is not a JSON list: {parsed.reason}"
    if not isinstance(parsed, list):
        return f"argument {quoted(name)} is not a JSON list: it is {jsontext.kind(parsed)}"
    if len(parsed) > foreach.MAX_ITEMS:
        return (
            f"argument {quoted(name)}: Too many: {len(parsed)}: must have at most "
            f"{foreach.MAX_ITEMS} items"
        )
    return ""


def _output_problem(text: str, entry: Flow) -> str:
    pair = foreach.split_output(text)
    if pair is None:
        return (
            f"Invalid value: {quoted(text)}: must be TARGET.KEY, a target of the entry "
            "(dependsOn.targets) and the key of its outputs that holds a JSON list"
        )
    target = pair[0]
    targets = list(dict.fromkeys(entry.targets))
    if target in targets:
        return ""
    said = f"{quoted(target)} is not a target of entry {entry.name}"
    if not targets:
        return f"{said}: it has no dependsOn.targets, whose outputs fromOutput reads"
    listed = ", ".join(targets[:10]) + (", ..." if len(targets) > 10 else "")
    return f"{said} (its targets: {listed})"


class _NotJson:
    def __init__(self, reason: str) -> None:
        self.reason = reason


@functools.lru_cache(maxsize=64)
def _json(text: str) -> Any:
    """`text` parsed as JSON (cached: 10,000 entries reading one argument parse it once),
    else a `_NotJson` saying why."""
    try:
        return json.loads(text)
    except ValueError as error:
        return _NotJson(str(error))
