"""`vcflow describe queue|priorityclass`: the sections after the common header — a
Queue's spec (weight, state, capability, deserved, guarantee, ...) and a PriorityClass's
value, default and policy, as kubectl's describers print them. Called by
`describe.render`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vcflow.api import scheduling
from vcflow.api.meta import Resource
from vcflow.cli.sections import NONE, Text


def scheduling_sections(obj: Resource, text: Text) -> None:
    """Nothing for kinds other than Queue and PriorityClass."""
    if isinstance(obj, scheduling.Queue):
        spec = obj.spec or scheduling.QueueSpec()
        guarantee = spec.guarantee.resource if spec.guarantee is not None else None
        text.heading("Spec")
        pairs: list[tuple[str, str | Sequence[str]]] = [
            ("Weight", str(obj.weight)),
            ("Capability", _amounts(spec.capability)),
            ("Deserved", _amounts(spec.deserved)),
            ("Guarantee", _amounts(guarantee)),
            ("Reclaimable", _text(spec.reclaimable)),
            ("Priority", _text(spec.priority)),
            ("Parent", _text(spec.parent)),
        ]
        text.fields(pairs, 1)
        text.heading("Status")
        text.fields([("State", obj.state)], 1)
    elif isinstance(obj, scheduling.PriorityClass):
        text.fields(
            [
                ("Value", str(obj.value)),
                ("GlobalDefault", "true" if obj.global_default else "false"),
                ("PreemptionPolicy", obj.preemption_policy or "PreemptLowerPriority"),
                ("Description", obj.description or NONE),
            ]
        )


def _amounts(values: Mapping[str, Any] | None) -> list[str]:
    """`cpu=2` lines, sorted; `<none>` when empty."""
    return [f"{k}={v}" for k, v in sorted((values or {}).items())] or [NONE]


def _text(value: object) -> str:
    if value is None or value == "":
        return NONE
    return str(value).lower() if isinstance(value, bool) else str(value)
