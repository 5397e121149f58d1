"""The operator's scheduling mode from `--scheduling-mode` or vc-scheduler's configuration,
and the priority ladder's rungs."""

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


@pytest.mark.parametrize(
    ("conf", "mode"),
    [
        (SLA_CONF, Mode.SLA),
        (DEFAULT_CONF, Mode.PRIORITY),
        (None, Mode.PRIORITY),
        ("a: [", Mode.NONE),
    ],
    ids=["sla-wins", "ladder", "no-configmap", "unreadable"],
)
def test_auto_with_a_ladder(conf: str | None, mode: Mode) -> None:
    assert schedmode.resolve(Mode.AUTO, conf, ladder=True)[0] is mode


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


LADDER = schedmode.Ladder(("low", "mid", "high"), 600)


@pytest.mark.parametrize(
    ("age", "rung", "next_in"),
    [(-5, 0, 605), (0, 0, 600), (599, 0, 1), (600, 1, 600), (1199.5, 1, 0.5), (1200, 2, None),
     (99999, 2, None)],
)  # fmt: skip
def test_the_ladder_climbs_one_rung_a_step_and_stays_on_the_last(
    age: float, rung: int, next_in: float | None
) -> None:
    assert LADDER.rung(age) == rung
    assert LADDER.next_step(age) == next_in


@pytest.mark.parametrize(
    ("classes", "step", "problem"),
    [
        (["low", ""], 60, "--priority-ladder: an empty PriorityClass name"),
        (["low", "low"], 60, "--priority-ladder: a PriorityClass named twice"),
        (["low", "high"], 0, "--ladder-step: must be more than 0s"),
        (["low", "high"], 60, None),
    ],
)
def test_ladder_flags_are_checked(classes: list[str], step: float, problem: str | None) -> None:
    assert schedmode.ladder_problem(classes, step) == problem
