"""Admission of `when`, `switch` and `spec.onExit` (docs/flow-features.md sections 13, 14).

- Every expression — an entry's `when`, each `switch` case's — parses (a syntax error names
  its column), is at most `expressions.MAX_LENGTH` bytes, and reads only `args`, `outputs`
  and `phases`: an `args.X` that `spec.arguments` declares, an `outputs.X`/`phases.X` whose
  X is a target of the entry (`dependsOn.targets`: those are what they hold).
- A `switch` has 1 to `MAX_CASES` cases, at most one without `when` (the default), and that
  one last; it excludes `template` (it picks the template). Its cases' template names are
  checked as `template` is, in `jobflow` (`_schema`, `_generated_names`).
- `spec.onExit` names at most `MAX_EXIT_HANDLERS` entries of the flow, each once; an exit
  handler runs after every other entry has ended, so it has no `dependsOn` and no entry
  depends on it.
- An entry's fan-out `for` (section 19) is checked by `fanout`; a `switch` case's `when`
  of such an entry may read `item` and `index` too (decided per item), nothing else may.

One line per problem, naming the field; parsing is cached per expression text
(`expressions.compile_expression`), so a flow repeating one expression parses it once.
`jobflow.validate_jobflow` calls `validate`. Pure.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence

from vcflow.admission import fanout
from vcflow.api import expressions
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import Flow, JobFlow
from vcflow.api.printable import quoted

#: The most cases of one `switch`.
MAX_CASES = 32
#: The most entries `spec.onExit` names.
MAX_EXIT_HANDLERS = 32
#: "did you mean" searches (difflib, O(names) each) for the first few unknown names only.
HINTS = 5


def validate(flow: JobFlow) -> list[FieldError]:
    """Every problem of the flow's expressions, switches and exit handlers."""
    found: list[FieldError] = []
    declared = [a.name for a in flow.spec.arguments or []] if flow.spec is not None else []
    context = _Context(declared)
    values = fanout.declared_values(flow)
    for i, entry in enumerate(flow.flows):
        base = f"spec.flows[{i}]"
        if entry.when is not None:
            found += context.expression(entry, entry.when, f"{base}.when")
        if entry.for_each is not None:
            found += fanout.entry_errors(flow, i, entry, values)
        if entry.switch is not None:
            found += _switch(entry, base)
            per_item = entry.for_each is not None
            for j, case in enumerate(entry.switch[: MAX_CASES + 1]):
                if case.when is not None:
                    found += context.expression(
                        entry, case.when, f"{base}.switch[{j}].when", per_item=per_item
                    )
    found += fanout.item_names(flow.flows)
    found += _exit_handlers(flow)
    return found


class _Context:
    """What an expression may read: the flow's declared arguments (and how many "did you
    mean" searches are left)."""

    def __init__(self, declared: Sequence[str]) -> None:
        self.declared = list(dict.fromkeys(declared))
        self.known = frozenset(self.declared)
        self.hints = HINTS

    def expression(
        self, entry: Flow, text: object, path: str, *, per_item: bool = False
    ) -> list[FieldError]:
        """`per_item`: a `switch` case of an entry with `for`, which may read `item` and
        `index` as well."""
        if not isinstance(text, str):  # (the model keeps strings only; a safeguard)
            return [FieldError(f"Invalid value: {text!r}: must be of type string", path)]
        try:
            compiled = expressions.compile_expression(text)
        except expressions.ExpressionError as error:
            return [FieldError(str(error), path)]
        if not compiled.references:
            return []
        targets: Collection[str] | None = None
        found: list[FieldError] = []
        for root, key in sorted(compiled.references, key=lambda r: (r[0], r[1] or "")):
            if per_item and root in expressions.ITEM_VARIABLES:
                continue  # (any item, any key: known only when the items are)
            if root not in expressions.VARIABLES:
                found.append(FieldError(_unknown_variable(root, per_item), path))
            elif key is None:
                continue  # `args[x]`, a whole map: nothing to check before it runs
            elif root == "args" and key not in self.known:
                found.append(FieldError(self._unknown_argument(key), path))
            elif root in ("outputs", "phases"):
                if targets is None:
                    targets = frozenset(entry.targets)
                if key not in targets:
                    found.append(FieldError(_not_a_target(entry, key), path))
        return found

    def _unknown_argument(self, name: str) -> str:
        said = f"unknown argument {quoted(name)} (args.{name})"
        if not self.declared:
            return f"{said}: the flow declares no arguments (spec.arguments)"
        if self.hints > 0:
            self.hints -= 1
            close = difflib.get_close_matches(name, self.declared, n=1)
            if close:
                return f"{said}; did you mean {quoted(close[0])}?"
        listed = ", ".join(self.declared[:10]) + (", ..." if len(self.declared) > 10 else "")
        return f"{said}: spec.arguments declares {listed}"


def _unknown_variable(root: str, per_item: bool) -> str:
    if per_item:
        return (
            f"unknown variable {quoted(root)}: a switch case of an entry with for reads args, "
            "outputs, phases, item and index"
        )
    said = f"unknown variable {quoted(root)}: a when reads args, outputs and phases"
    if root in expressions.ITEM_VARIABLES:
        return f"{said} (item and index: in the switch cases of an entry with for)"
    return said


def _not_a_target(entry: Flow, key: str) -> str:
    said = f"{quoted(key)} is not a target of entry {entry.name}"
    targets = list(dict.fromkeys(entry.targets))
    if not targets:
        return f"{said}: outputs and phases hold its targets' (dependsOn.targets), it has none"
    listed = ", ".join(targets[:10]) + (", ..." if len(targets) > 10 else "")
    return f"{said}: outputs and phases hold its targets' ({listed})"


def _switch(entry: Flow, base: str) -> list[FieldError]:
    cases = entry.switch or []
    path = f"{base}.switch"
    found: list[FieldError] = []
    if entry.template is not None:
        found.append(
            FieldError(
                "template and switch exclude each other: the switch's cases pick the template",
                f"{base}.template",
            )
        )
    if not cases:
        found.append(
            FieldError("Invalid value: []: a switch has at least one case {when, template}", path)
        )
    if len(cases) > MAX_CASES:
        found.append(
            FieldError(f"Too many: {len(cases)}: must have at most {MAX_CASES} items", path)
        )
    default: int | None = None
    for j, case in enumerate(cases):
        if case.when is not None:
            continue
        if default is not None:
            found.append(
                FieldError(
                    f'only one case may go without "when" (the default): case {default} has '
                    "none already",
                    f"{path}[{j}]",
                )
            )
        elif j != len(cases) - 1:
            found.append(
                FieldError(
                    'a case without "when" is the default: it must be the last case',
                    f"{path}[{j}]",
                )
            )
        default = j if default is None else default
    return found


def _exit_handlers(flow: JobFlow) -> list[FieldError]:
    handlers = flow.exit_handlers
    if not handlers:
        return []
    found: list[FieldError] = []
    if len(handlers) > MAX_EXIT_HANDLERS:
        found.append(
            FieldError(
                f"Too many: {len(handlers)}: must have at most {MAX_EXIT_HANDLERS} items",
                "spec.onExit",
            )
        )
    entries: dict[str, int] = {}
    for i, entry in enumerate(flow.flows):
        entries.setdefault(entry.name, i)
    seen: set[str] = set()
    hints = HINTS
    for k, name in enumerate(handlers):
        path = f"spec.onExit[{k}]"
        if name in seen:
            found.append(FieldError(f"Duplicate value: {quoted(name)}", path))
            continue
        seen.add(name)
        if name in entries:
            continue
        message = f"{quoted(name)} is not an entry of the flow"
        close = difflib.get_close_matches(name, list(entries), n=1) if hints > 0 else []
        hints -= 1
        if close:
            message += f"; did you mean {quoted(close[0])}?"
        found.append(FieldError(message, path))
    for name in sorted(seen & entries.keys(), key=entries.__getitem__):
        i = entries[name]
        if flow.flows[i].depends_on is not None:
            found.append(
                FieldError(
                    "an exit handler (spec.onExit) runs after every other entry has ended; it "
                    "may not have dependsOn",
                    f"spec.flows[{i}].dependsOn",
                )
            )
    for i, entry in enumerate(flow.flows):
        for m, target in enumerate(entry.targets):
            if target in seen:
                found.append(
                    FieldError(
                        f"{quoted(target)} is an exit handler (spec.onExit): no entry may "
                        "depend on it",
                        f"spec.flows[{i}].dependsOn.targets[{m}]",
                    )
                )
    return found
