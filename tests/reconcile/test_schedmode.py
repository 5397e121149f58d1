"""The operator's scheduling mode from `--scheduling-mode` or vc-scheduler's configuration."""

from __future__ import annotations

import pytest

from vcflow.reconcile import schedmode
from vcflow.reconcile.schedmode import Mode

DEFAULT_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""
SLA_CONF = DEFAULT_CONF.replace("  - name: conformance", "  - name: conformance\n  - name: sla")


@pytest.mark.parametrize(
    ("given", "conf", "mode"),
    [
        (Mode.AUTO, SLA_CONF, Mode.SLA),
        (Mode.AUTO, DEFAULT_CONF, Mode.NONE),
        (Mode.AUTO, None, Mode.NONE),
        (Mode.AUTO, "tiers: [", Mode.NONE),
        (Mode.AUTO, "actions: enqueue", Mode.NONE),
        (Mode.NONE, SLA_CONF, Mode.NONE),
        (Mode.SLA, DEFAULT_CONF, Mode.SLA),
    ],
    ids=["sla-enabled", "default", "no-configmap", "not-yaml", "no-tiers", "flag-none", "flag-sla"],
)
def test_resolve(given: Mode, conf: str | None, mode: Mode) -> None:
    assert schedmode.resolve(given, conf)[0] is mode


def test_an_unreadable_configuration_says_why_in_one_line() -> None:
    mode, why = schedmode.resolve(Mode.AUTO, "tiers:\n- plugins: 3\n")
    assert mode is Mode.NONE
    assert why == (
        "unreadable volcano-scheduler-configmap: volcano-scheduler.conf: "
        "tiers[0].plugins is not a list"
    )
    assert "\n" not in schedmode.resolve(Mode.AUTO, "a: [\n b")[1]


def test_plugins_in_tier_order() -> None:
    assert schedmode.plugins(SLA_CONF)[:4] == ["priority", "gang", "conformance", "sla"]
