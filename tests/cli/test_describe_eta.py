"""`vcflow describe jobflow`'s `Critical Path:` and `ETA:` lines and `vcflow get jf -o
wide`'s ETA column, on a flow over Volcano's example templates with `runningEstimate`s."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from .conftest import EXAMPLE, Phase, Rows, Vc

Write = Callable[..., Path]

ESTIMATED = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: est}
spec:
  flows:
    - {name: a, runningEstimate: 1m}
    - {name: b, runningEstimate: 5m, dependsOn: {targets: [a]}}
    - {name: c, dependsOn: {targets: [a]}}
"""
TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def applied(vc: Vc, write_manifest: Write) -> None:
    for path in (EXAMPLE / "JobTemplate.yaml", write_manifest(ESTIMATED)):
        result = vc("apply", "-f", path)
        assert result.exit_code == 0, result.output


def field(text: str, name: str) -> str:
    found = [
        line.split(":", 1)[1].strip()
        for line in text.splitlines()
        if line.strip().startswith(name + ":")
    ]
    assert found, f"no {name}: in\n{text}"
    return found[0]


def test_describe_shows_the_critical_path_and_an_eta(
    vc: Vc, write_manifest: Write, set_phase: Phase
) -> None:
    applied(vc, write_manifest)
    set_phase("est-a", "Running")
    text = vc("describe", "jf", "est").stdout
    assert field(text, "Critical Path") == "a → b"
    # a runs (1m estimate, just started), then b's 5m: about 6m from now
    assert re.fullmatch(rf"{TIME} \(in (5m5\ds|6m0s)\)", field(text, "ETA")), text
    assert field(text, "Phase") == "Running"  # (the sections before it are kept)


def test_eta_is_unknown_without_estimates_and_none_once_ended(
    example: Result, vc: Vc, set_phase: Phase
) -> None:
    text = vc("describe", "jf", "test").stdout
    assert field(text, "Critical Path") == "a → b → c → e"
    assert field(text, "ETA") == "<unknown>"
    for job in "abcde":
        set_phase(f"test-{job}", "Completed")
    assert field(vc("describe", "jf", "test").stdout, "ETA") == "<none>"


def test_get_wide_has_an_eta_column(
    vc: Vc, write_manifest: Write, set_phase: Phase, rows: Rows
) -> None:
    applied(vc, write_manifest)
    set_phase("est-a", "Running")
    found = rows(vc("get", "jf", "est", "-o", "wide").stdout)
    assert re.fullmatch(TIME, found[0]["ETA"]), found
    for job in "abc":
        set_phase(f"est-{job}", "Completed")
    assert rows(vc("get", "jf", "est", "-o", "wide").stdout)[0]["ETA"] == "-"
    assert "ETA" not in vc("get", "jf").stdout
