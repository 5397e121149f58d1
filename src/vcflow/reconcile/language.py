"""The flow language's part of a flow's reconcile (docs/flow-features.md part II): the
outputs each completed entry handed on and the ones still to read (`Outputs`), what an
entry's `when` and `switch` decide when its dependencies are met (`gate`), and where the
exit handlers stand (`ExitHandlers`). Kept out of `Entry` and `FlowIndex`, which call these.
Pure: the controller reads the pods and gives the outputs (`FlowIndex.give_outputs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vcflow.api import arguments
from vcflow.api.expressions import ExpressionError, compile_expression
from vcflow.api.foreach import ITEMS_INVALID
from vcflow.api.jobflow import Flow, JobFlow
from vcflow.api.phases import FlowPhase
from vcflow.reconcile import outputs as reading
from vcflow.reconcile.entries import DEADLINE_EXCEEDED, Entry, State

WHEN_FALSE = "WhenFalse"
WHEN_ERROR = "WhenError"
NO_CASE_MATCHED = "NoCaseMatched"
SUBSTITUTION_FAILED = "SubstitutionFailed"
#: why the flow runs on although its other entries have ended (`state.reason`)
EXIT_HANDLERS = "ExitHandlers"
#: the variable that tells an exit handler how the flow ended without it
ENV_FLOW_PHASE = "VCFLOW_FLOW_PHASE"
#: what an entry's outputs failed with (`reconcile.outputs`): the entry failed, although
#: its vcjob Completed
OUTPUT_REASONS = frozenset({"OutputInvalid", "OutputTooLarge", "OutputConflict"})
#: what an entry failed with before any vcjob was made
GATE_FAILURES = frozenset({WHEN_ERROR, SUBSTITUTION_FAILED, ITEMS_INVALID})


@dataclass
class Outputs:
    """The outputs of a flow's completed entries (entry → JSON object), and the completed
    entries whose outputs the controller has still to read from their pods. An entry whose
    dependencies are met is held while a target's outputs are unread (`held`)."""

    read: dict[str, Any] = field(default_factory=dict)
    unread: set[str] = field(default_factory=set)
    #: bytes of the outputs read (compact JSON), against `outputs.FLOW_MAX`
    size: int = 0
    #: target → the entries held until its outputs are read
    held: dict[str, set[str]] = field(default_factory=dict)

    def completed(self, name: str) -> None:
        if name not in self.read:
            self.unread.add(name)

    def give(self, name: str, outputs: dict[str, Any] | None) -> set[str]:
        """The target's outputs were read (None: they failed it): the entries held for it."""
        self.unread.discard(name)
        if outputs is not None:
            self.keep(name, outputs)
        return self.held.pop(name, set())

    def give_list(self, name: str, listed: list[Any]) -> set[str]:
        """A `for` entry's outputs, its items' in index order (already counted in
        `size`): the entries held for it."""
        self.unread.discard(name)
        self.read[name] = listed
        return self.held.pop(name, set())

    def keep(self, name: str, outputs: dict[str, Any]) -> None:
        self.forget(name)
        self.read[name] = outputs
        self.size += len(reading.encode(outputs).encode())

    def too_large(self, outputs: dict[str, Any]) -> reading.Failure | None:
        """Would these outputs take the flow's past `FLOW_MAX`?"""
        size = len(reading.encode(outputs).encode())
        if self.size + size <= reading.FLOW_MAX:
            return None
        return reading.Failure(
            reading.OUTPUT_TOO_LARGE,
            f"the flow's outputs would take {self.size + size} bytes, more than "
            f"{reading.FLOW_MAX} (its entries' together)",
        )

    def forget(self, name: str) -> None:
        """A new attempt of the entry: its last outputs are no longer its."""
        gone = self.read.pop(name, None)
        if isinstance(gone, dict):
            self.size -= len(reading.encode(gone).encode())
        self.unread.discard(name)

    def waiting_for(self, entry: Entry) -> str | None:
        """A target of `entry` whose outputs are unread (the entry is held for it)."""
        for target in entry.targets:
            if target in self.unread:
                self.held.setdefault(target, set()).add(entry.name)
                return target
        return None

    def of_targets(self, entry: Entry) -> dict[str, Any]:
        return {t: self.read[t] for t in entry.targets if t in self.read}


@dataclass(frozen=True)
class Gate:
    """What an entry's `when` and `switch` decided: build it from `template` (the case
    taken: `case`), or an outcome without a vcjob (`state`, with its reason and message)."""

    template: str = ""
    case: int | None = None
    state: State = State.NONE
    reason: str = ""
    message: str = ""


def phase_of(entry: Entry) -> str:
    """An entry's phase as `phases.X` reads it."""
    if entry.state == State.FAILED and entry.verdict == DEADLINE_EXCEEDED:
        return DEADLINE_EXCEEDED
    return str(entry.state)


def gate(
    entry: Entry,
    spec: Flow,
    entries: Mapping[str, Entry],
    args: Mapping[str, str],
    outputs: Outputs,
    item: tuple[int, Any] | None = None,
) -> Gate:
    """Evaluate the entry's `when`, then its `switch`, once its dependencies are met. A
    `for` entry's `when` is decided once, for the entry; its `switch` per item (`item`:
    its index and value, CEL's `index` and `item`), over the entry's targets."""
    if (spec.when is None or item is not None) and not spec.switch:
        return Gate(template=spec.template_name)
    basis = entries[entry.item.group] if entry.item is not None else entry
    seen = outputs.of_targets(basis)
    phases = {t: phase_of(entries[t]) for t in basis.targets if t in entries}
    extra: dict[str, Any] = {} if item is None else {"item": item[1], "index": item[0]}
    if spec.when is not None and item is None:
        try:
            holds = compile_expression(spec.when).evaluate(args, seen, phases)
        except ExpressionError as exc:
            return Gate(state=State.FAILED, reason=WHEN_ERROR, message=f"when: {exc}")
        if not holds:
            read = _read(spec.when, args, seen, phases)
            return Gate(
                state=State.SKIPPED, reason=WHEN_FALSE, message=f"when false: {spec.when}{read}"
            )
    if not spec.switch:
        return Gate(template=spec.template_name)
    for i, case in enumerate(spec.switch):
        if case.when is None:
            return Gate(template=case.template, case=i)
        try:
            holds = compile_expression(case.when).evaluate(args, seen, phases, **extra)
        except ExpressionError as exc:
            return Gate(state=State.FAILED, reason=WHEN_ERROR, message=f"switch[{i}].when: {exc}")
        if holds:
            return Gate(template=case.template, case=i)
    return Gate(
        state=State.SKIPPED,
        reason=NO_CASE_MATCHED,
        message="no case of the switch holds and it has none without when",
    )


#: characters of the values a WhenFalse message shows
_SHOWN = 200


def _read(
    text: str, args: Mapping[str, str], outputs: Mapping[str, Any], phases: Mapping[str, str]
) -> str:
    """` (with args.threshold="2", outputs.evaluate={...})`: what the expression read."""
    found = {"args": args, "outputs": outputs, "phases": phases}
    parts = []
    for root, key in sorted(compile_expression(text).references, key=lambda r: (r[0], r[1] or "")):
        if key is None or key not in found.get(root, {}):
            continue
        parts.append(f"{root}.{key}={reading.encode(found[root][key])}")
    shown = ", ".join(parts)
    if len(shown) > _SHOWN:
        shown = shown[: _SHOWN - 1] + "…"
    return f" (with {shown})" if shown else ""


@dataclass
class ExitHandlers:
    """The entries of `spec.onExit`: they start once every other entry has ended, and the
    flow's phase is the one it has without them (`base`) — Failed also when one fails."""

    names: frozenset[str]
    #: the phase the flow has without its exit handlers
    base: FlowPhase = FlowPhase.PENDING
    #: the other entries have ended: the handlers may be created
    released: bool = False

    @classmethod
    def of(cls, flow: JobFlow) -> ExitHandlers:
        return cls(frozenset(flow.exit_handlers))

    def phase(self, handlers: list[Entry]) -> FlowPhase:
        """The flow's phase once released: Running until every handler has an outcome."""
        if any(e.state not in (State.COMPLETED, State.FAILED, State.SKIPPED) for e in handlers):
            return FlowPhase.RUNNING
        if self.base == FlowPhase.FAILED or any(e.state == State.FAILED for e in handlers):
            return FlowPhase.FAILED
        return self.base

    def message(self, handlers: list[Entry]) -> str:
        running = [e.name for e in handlers if e.state not in (State.COMPLETED, State.SKIPPED)]
        which = ", ".join(running) if running else "none"
        return f"the exit handlers run ({which}); the flow is {self.base} without them"


def flow_phase_env(handlers: ExitHandlers) -> str:
    """`VCFLOW_FLOW_PHASE`: Succeed, or Failed (a stopped or expired flow too)."""
    return str(FlowPhase.SUCCEED if handlers.base == FlowPhase.SUCCEED else FlowPhase.FAILED)


def inputs_env(entry: Entry, outputs: Outputs) -> str:
    """`VCFLOW_INPUTS`: each target's outputs (targets without any left out)."""
    value = reading.inputs_value({t: o for t, o in outputs.of_targets(entry).items() if o})
    return arguments.escape_expansion(value)
