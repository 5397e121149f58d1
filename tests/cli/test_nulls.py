"""A null in a manifest's job spec is an absent field, as in Kubernetes: nothing shows
`null` afterwards — not the template, the vcjob or its pods (which showed
`priorityClassName: null` even when no manifest had one)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from .flows import jobflow, template

Vc = Callable[..., Result]

TRUE = {"container": "c", "image": "x", "command": '["true"]'}
MANIFEST = (
    template(
        "a",
        spec="\n  priorityClassName: null",
        pod="\n          priorityClassName: null\n          nodeSelector: null",
        extra="\n              env: null\n              resources: {limits: null}",
        **TRUE,
    )
    + template("b", **TRUE)
    + jobflow("f", "a", "b")
)


def test_no_null_in_what_a_run_leaves(vc: Vc, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST)
    result = vc("run", "-f", path, "--no-live", "--timeout", "60")
    assert result.exit_code == 0, result.output + result.stderr
    for kind in ("jobtemplate", "vcjob", "pod"):
        shown = vc("get", kind, "-o", "yaml")
        assert shown.exit_code == 0
        assert "null" not in shown.stdout, f"{kind}:\n{shown.stdout}"
    pods = vc("get", "pods", "-o", "name").stdout.split()
    assert pods == ["pod/f-a-t-0", "pod/f-b-t-0"]
