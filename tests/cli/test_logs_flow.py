"""`vcflow logs jobflow/NAME` and `vcjob/NAME`: every pod of the flow in flow order, each
line prefixed `[pod/NAME/CONTAINER]` for more than one pod, --tail, --no-prefix, and -f
following a flow that another process runs until it ends, its new pods included."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import pytest

from .flows import (
    cli,
    ended,
    flow,
    followed,
    gated_flow,
    jobflow,
    running,
    stop_pods,
    template,
    wait_until,
)

VCFLOW = (sys.executable, "-m", "vcflow")


def _ran(tmp_path: Path, state_dir: Path, a: str, b: str, retain: str = "retain") -> str:
    """Flow `f` (b after a, the templates' scripts `a` and `b`) run to its end: what
    `vcflow logs jobflow/f` then prints."""
    manifest = tmp_path / "f.yaml"
    manifest.write_text(
        template("a", a) + template("b", b) + jobflow("f", "b<a", "a", retain=retain)
    )
    assert cli(state_dir, "run", "-f", str(manifest), "--no-live").returncode == 0
    got = cli(state_dir, "logs", "jobflow/f")
    assert (got.returncode, got.stderr) == (0, "")
    return got.stdout


def test_logs_of_a_finished_flow(tmp_path: Path, state_dir: Path) -> None:
    try:
        logs = _ran(tmp_path, state_dir, "echo a1; echo a2", "echo b1; echo b2")
        assert logs.splitlines() == [
            "[pod/f-b-t-0/main] b1",
            "[pod/f-b-t-0/main] b2",
            "[pod/f-a-t-0/main] a1",
            "[pod/f-a-t-0/main] a2",
        ]  # the entries' order in the flow
        assert cli(state_dir, "logs", "jf/f", "--tail", "1", "--no-prefix").stdout == "b2\na2\n"
        assert cli(state_dir, "logs", "vcjob/f-a").stdout == "a1\na2\n"
        assert cli(state_dir, "logs", "vj/f-a", "--prefix").stdout.startswith("[pod/f-a-t-0/")
        wrong = cli(state_dir, "logs", "jf/f", "-c", "nope")
        assert (wrong.returncode, wrong.stdout, wrong.stderr) == (
            1,
            "",
            'container "nope" is not valid for any pod of jobflow/f; choose one of: main\n',
        )  # (it printed nothing, exit 0)
        missing = cli(state_dir, "logs", "jf/nope")
        assert (missing.returncode, missing.stderr) == (
            1,
            'Error from server (NotFound): jobflows.flow.volcano.sh "nope" not found\n',
        )
    finally:
        stop_pods(state_dir)


def test_logs_of_a_flow_whose_retain_policy_deleted_its_pods(
    tmp_path: Path, state_dir: Path
) -> None:
    """`jobRetainPolicy: delete` (Volcano's example flow) deletes the vcjobs and their pods
    once the flow Succeed: the flow's logs are then each pod's latest kept attempt, as
    `vcflow logs POD` shows a deleted pod's, not nothing."""
    try:
        logs = _ran(tmp_path, state_dir, "echo a1", "echo b1; echo b2", retain="delete")
        assert cli(state_dir, "get", "pods", "--no-headers").stdout == ""
        assert logs.splitlines() == [
            "[pod/f-b-t-0/main] b1",
            "[pod/f-b-t-0/main] b2",
            "[pod/f-a-t-0/main] a1",
        ]
        assert cli(state_dir, "logs", "jf/f", "--tail", "1", "--no-prefix").stdout == "b2\na1\n"
        assert cli(state_dir, "logs", "jf/f", "-f").stdout == logs  # (it has ended)
        # a flow of the same name created anew (in a later second: the timestamps' unit)
        # has none of the old one's logs
        assert cli(state_dir, "delete", "jf", "f").returncode == 0
        later = math.floor(time.time()) + 1
        wait_until(lambda: time.time() >= later, "the next second")
        manifest = tmp_path / "f.yaml"
        manifest.write_text(jobflow("f", "zz"))
        assert cli(state_dir, "apply", "-f", str(manifest)).returncode == 0
        assert cli(state_dir, "stop", "jobflow", "f").returncode == 0
        assert cli(state_dir, "logs", "jobflow/f").stdout == ""
    finally:
        stop_pods(state_dir)


def test_follow_a_running_flow_until_it_ends(tmp_path: Path, state_dir: Path) -> None:
    manifest, go = gated_flow(tmp_path, "a1", "a2", "echo b1")
    try:
        with running(state_dir, manifest) as run:
            wait_until(
                lambda: "a1" in cli(state_dir, "logs", "vcjob/f-a").stdout, "job a's first line"
            )
            # a's first line; then a ends, b (a new pod) runs, then the flow ends
            argv = [*VCFLOW, "--state-dir", str(state_dir), "logs", "-f", "jobflow/f"]
            first, code, out, err = followed(argv, go)
            assert first == "[pod/f-a-t-0/main] a1\n"
            assert (code, err) == (0, "")
            assert out.splitlines() == ["[pod/f-a-t-0/main] a2", "[pod/f-b-t-0/main] b1"]
            assert ended(run)[0] == 0
    finally:
        go.touch()
        stop_pods(state_dir)


@pytest.mark.parametrize("retain", ["retain", "delete"])
def test_a_for_entrys_items_come_at_its_place_by_index(
    tmp_path: Path, state_dir: Path, retain: str
) -> None:
    """In flow order, whether the flow's pods are there or its retain policy deleted them
    (their kept attempts' logs then)."""
    manifest = tmp_path / "f.yaml"
    items = ", ".join(str(i) for i in range(11))
    manifest.write_text(
        template("prep", "echo prep")
        + template("train", "echo item $VCFLOW_INDEX")
        + template("pick", "echo pick")
        + flow(
            "f",
            "{name: prep}",
            f"{{name: train, dependsOn: {{targets: [prep]}}, for: {{items: [{items}]}}}}",
            "{name: pick, dependsOn: {targets: [train]}}",
            spec=f"  jobRetainPolicy: {retain}\n",
        )
    )
    try:
        assert cli(state_dir, "run", "-f", str(manifest), "--no-live").returncode == 0
        pods = cli(state_dir, "get", "pods", "--no-headers").stdout
        assert (pods == "") is (retain == "delete")
        got = cli(state_dir, "logs", "jobflow/f", "--no-prefix")
        assert (got.returncode, got.stderr) == (0, "")
        expected = ["prep", *(f"item {i}" for i in range(11)), "pick"]
        assert got.stdout.splitlines() == expected  # (item 10 after item 9, pick last)
    finally:
        stop_pods(state_dir)
