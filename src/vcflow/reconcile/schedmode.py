"""Which scheduling mode the operator runs in (docs/scheduling.md, "On a cluster"): from
`--scheduling-mode`, or — `auto` — from vc-scheduler's configuration, the YAML under
`volcano-scheduler.conf` in ConfigMap volcano-system/volcano-scheduler-configmap. Also
the priority ladder's rung: the PriorityClass a flow's pending vcjobs have reached by its
age (mode `priority`). Pure: the operator reads the ConfigMap (`operator.schedconf`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import yaml

CONFIGMAP_NAMESPACE = "volcano-system"
CONFIGMAP_NAME = "volcano-scheduler-configmap"
CONFIGMAP_KEY = "volcano-scheduler.conf"
SLA_PLUGIN = "sla"


class Mode(StrEnum):
    AUTO = "auto"
    SLA = "sla"  # each vcjob gets volcano.sh/sla-waiting-time (`reconcile.slatime`)
    PRIORITY = "priority"  # pending vcjobs climb --priority-ladder as their flow ages
    NONE = "none"  # the vcjobs as built, nothing more


class ConfError(ValueError):
    """vc-scheduler's configuration cannot be read; its message says why, in one line."""


def plugins(conf: str) -> list[str]:
    """The names under `tiers[].plugins[].name`, in order; ConfError when `conf` is not
    such a YAML document."""
    try:
        data: Any = yaml.safe_load(conf)
    except yaml.YAMLError as exc:
        raise ConfError(f"{CONFIGMAP_KEY}: not YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tiers"), list):
        raise ConfError(f"{CONFIGMAP_KEY}: no tiers list")
    found: list[str] = []
    for i, tier in enumerate(data["tiers"]):
        listed = tier.get("plugins") if isinstance(tier, dict) else None
        if not isinstance(listed, list):
            raise ConfError(f"{CONFIGMAP_KEY}: tiers[{i}].plugins is not a list")
        found += [str(p["name"]) for p in listed if isinstance(p, dict) and "name" in p]
    return found


def resolve(given: Mode, conf: str | None, *, ladder: bool = False) -> tuple[Mode, str]:
    """The mode to run in and why (the operator logs both). `given` other than AUTO wins;
    AUTO is SLA when `conf` enables the sla plugin, else PRIORITY when a ladder is given,
    else NONE — NONE also when `conf` is unreadable."""
    if given is not Mode.AUTO:
        return given, "--scheduling-mode"
    if conf is None:
        why = f"no {CONFIGMAP_NAMESPACE}/{CONFIGMAP_NAME}"
    else:
        try:
            if SLA_PLUGIN in plugins(conf):
                return Mode.SLA, f"{CONFIGMAP_NAME} enables the sla plugin"
        except ConfError as exc:
            return Mode.NONE, f"unreadable {CONFIGMAP_NAME}: {exc}"
        why = f"{CONFIGMAP_NAME} does not enable the sla plugin"
    if ladder:
        return Mode.PRIORITY, f"{why}; --priority-ladder given"
    return Mode.NONE, why


@dataclass(frozen=True)
class Ladder:
    """`--priority-ladder` (PriorityClass names, lowest first) and `--ladder-step` (s)."""

    classes: tuple[str, ...]
    step: float

    def rung(self, age: float) -> int:
        """The index a flow `age` seconds old has reached: one more each step, the last kept."""
        return max(0, min(int(age // self.step), len(self.classes) - 1))

    def next_step(self, age: float) -> float | None:
        """Seconds from `age` to the next rung; None once on the last."""
        if self.rung(age) >= len(self.classes) - 1:
            return None
        return (math.floor(max(age, 0.0) / self.step) + 1) * self.step - age


def ladder_problem(classes: Sequence[str], step: float) -> str | None:
    """Why `--priority-ladder`/`--ladder-step` cannot be used (None: they can)."""
    if any(not c for c in classes):
        return "--priority-ladder: an empty PriorityClass name"
    if len(set(classes)) != len(classes):
        return "--priority-ladder: a PriorityClass named twice"
    if step <= 0:
        return "--ladder-step: must be more than 0s"
    return None
