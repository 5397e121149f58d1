"""Which scheduling mode the operator runs in (docs/scheduling.md, "On a cluster"): from
`--scheduling-mode`, or — `auto` — from vc-scheduler's configuration, the YAML under
`volcano-scheduler.conf` in ConfigMap volcano-system/volcano-scheduler-configmap. (The
issue's `priority` mode, a PriorityClass ladder climbed as a flow ages, is not built.)
Pure: the operator reads the ConfigMap (`operator.schedconf`).
"""

from __future__ import annotations

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


def resolve(given: Mode, conf: str | None) -> tuple[Mode, str]:
    """The mode to run in and why (the operator logs both). `given` other than AUTO wins;
    AUTO is SLA when `conf` enables the sla plugin, else NONE — also when `conf` is None
    (not found) or unreadable."""
    if given is not Mode.AUTO:
        return given, "--scheduling-mode"
    if conf is None:
        return Mode.NONE, f"no {CONFIGMAP_NAMESPACE}/{CONFIGMAP_NAME}"
    try:
        if SLA_PLUGIN in plugins(conf):
            return Mode.SLA, f"{CONFIGMAP_NAME} enables the sla plugin"
    except ConfError as exc:
        return Mode.NONE, f"unreadable {CONFIGMAP_NAME}: {exc}"
    return Mode.NONE, f"{CONFIGMAP_NAME} does not enable the sla plugin"
