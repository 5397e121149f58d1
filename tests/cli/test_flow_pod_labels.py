"""Embedded, the pods of a flow's vcjobs carry the flow's labels
(`volcano.sh/createdByJobFlow: <ns>.<flow>`, `volcano.sh/createdByJobTemplate:
<ns>.<entry>`), so a label selector finds a flow's pods after `vcflow run`, and another
flow's pods are not among them (issue 25, defect 5)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from vcflow.api.names import LABEL_CREATED_BY_FLOW, LABEL_CREATED_BY_TEMPLATE
from vcflow.api.pod import Pod
from vcflow.store import SqliteStore

from .flows import jobflow, template

Vc = Callable[..., Result]


def test_a_flows_pods_are_found_by_its_label_after_a_run(
    vc: Vc, state_dir: Path, tmp_path: Path
) -> None:
    manifest = tmp_path / "flows.yaml"
    manifest.write_text(
        template("a", "echo a")
        + template("b", "echo b")
        + jobflow("test", "a", "b<a")
        + "---"
        + jobflow("other", "a")
    )
    done = vc("run", "-f", manifest, "--no-live")
    assert done.exit_code == 0, done.output + done.stderr
    store = SqliteStore.in_state_dir(state_dir)
    try:
        found = store.list(Pod, "default", {LABEL_CREATED_BY_FLOW: "default.test"})
        by_entry = store.list(Pod, "default", {LABEL_CREATED_BY_TEMPLATE: "default.a"})
    finally:
        store.close()
    assert sorted(p.name for p in found) == ["test-a-t-0", "test-b-t-0"]
    assert sorted(p.name for p in by_entry) == ["other-a-t-0", "test-a-t-0"]
