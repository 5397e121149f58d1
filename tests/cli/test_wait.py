"""`vcflow wait` as kubectl's: a real `vcflow wait` process blocks while another process
runs the flow to its end, then prints `... condition met` and exits 0; at --timeout it
prints kubectl's line and exits 1; --for=delete, --for=condition=, and the usage errors.
Embedded and through a server."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from typer.testing import Result

from .conftest import Vc
from .flows import (
    DEADLINE,
    child,
    cli,
    ended,
    jobflow,
    running,
    stop_pods,
    supervised,
    template,
    wait_until,
)
from .test_remote import Server, running_server  # noqa: F401 (fixture)

PHASE = "--for=jsonpath={.status.state.phase}=Succeed"


def blocked_flow(tmp_path: Path) -> tuple[Path, Path]:
    """A one-job flow `f` whose job ends once the file `go` exists: (manifest, go)."""
    go = tmp_path / "go"
    manifest = tmp_path / "flow.yaml"
    script = f"while [ ! -e {go} ]; do sleep 0.05; done; echo done"
    manifest.write_text(template("a", script) + jobflow("f", "a"))
    return manifest, go


def waiting(*args: str) -> AbstractContextManager[subprocess.Popen[str]]:
    """`vcflow ARGS` (a wait) as a child process; killed if still running after the block."""
    return supervised(child(*args))


def has_open(pid: int, path: Path) -> bool:
    """Whether process `pid` has `path` open (it has started reading the store)."""
    try:
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


def test_wait_returns_when_another_process_completes_the_flow(
    tmp_path: Path, state_dir: Path
) -> None:
    manifest, go = blocked_flow(tmp_path)
    state = str(state_dir)
    try:
        with running(state_dir, manifest) as run:
            wait_until(lambda: cli(state_dir, "get", "jf", "f").returncode == 0, "the flow")
            with waiting(
                "--state-dir", state, "wait", "jobflow", "f", PHASE, "--timeout", "2m"
            ) as w:
                db = (state_dir / "vcflow.db").resolve()
                wait_until(lambda: has_open(w.pid, db) or w.poll() is not None, "wait to read")
                assert w.poll() is None  # the flow cannot be done: its job waits for `go`
                go.touch()
                out, err = w.communicate(timeout=DEADLINE)
                assert (w.returncode, out, err) == (
                    0,
                    "jobflow.flow.volcano.sh/f condition met\n",
                    "",
                )
            code, _, err = ended(run)
            assert code == 0, err
    finally:
        go.touch()
        stop_pods(state_dir)


def test_wait_times_out_as_kubectl(tmp_path: Path, state_dir: Path) -> None:
    manifest, go = blocked_flow(tmp_path)
    try:
        with running(state_dir, manifest):
            wait_until(lambda: cli(state_dir, "get", "jf", "f").returncode == 0, "the flow")
            done = cli(state_dir, "wait", "jf/f", PHASE, "--timeout", "1s")
            assert (done.returncode, done.stdout) == (1, "")
            assert done.stderr == "error: timed out waiting for the condition on jobflows/f\n"
    finally:
        go.touch()
        stop_pods(state_dir)


def test_wait_for_delete(vc: Vc, state_dir: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "t.yaml"
    manifest.write_text(template("a", "true") + template("b", "true"))
    assert vc("apply", "-f", manifest).exit_code == 0
    state = str(state_dir)
    with waiting("--state-dir", state, "wait", "jt", "a", "b", "--for=delete") as w:
        db = (state_dir / "vcflow.db").resolve()
        wait_until(lambda: has_open(w.pid, db) or w.poll() is not None, "wait to read")
        assert w.poll() is None
        assert vc("delete", "jt", "a", "b").exit_code == 0
        out, err = w.communicate(timeout=DEADLINE)
    assert w.returncode == 0, err
    assert out.splitlines() == [
        "jobtemplate.flow.volcano.sh/a condition met",
        "jobtemplate.flow.volcano.sh/b condition met",
    ]
    gone = vc("wait", "jt", "a", "--for=delete", "--timeout", "0s")
    assert (gone.exit_code, gone.stdout) == (0, "jobtemplate.flow.volcano.sh/a condition met\n")


def test_a_negative_timeout_waits_as_kubectl_does(vc: Vc, state_dir: Path, tmp_path: Path) -> None:
    # kubectl: "negative means wait for a week" (it timed out at once)
    manifest = tmp_path / "t.yaml"
    manifest.write_text(template("a", "true"))
    assert vc("apply", "-f", manifest).exit_code == 0
    args = ("--state-dir", str(state_dir), "wait", "jt", "a", "--for=delete", "--timeout=-1s")
    with waiting(*args) as w:
        db = (state_dir / "vcflow.db").resolve()
        wait_until(lambda: has_open(w.pid, db) or w.poll() is not None, "wait to read")
        assert w.poll() is None
        assert vc("delete", "jt", "a").exit_code == 0
        out, err = w.communicate(timeout=DEADLINE)
    assert (w.returncode, out) == (0, "jobtemplate.flow.volcano.sh/a condition met\n"), err


def test_conditions_met_at_once(example: Result, vc: Vc) -> None:
    assert vc("wait", "jf", "test", "--for=condition=Pending").exit_code == 0
    assert vc("wait", "jf", "test", "--for=condition=Succeed=false").exit_code == 0
    met = vc("wait", "jt", "--all", "--for=jsonpath={.spec.minAvailable}=1")
    assert met.exit_code == 0 and len(met.stdout.splitlines()) == 5
    exists = vc("wait", "jt/a", "jt/b", "--for", "jsonpath=.spec.tasks")
    assert exists.exit_code == 0
    not_met = vc("wait", "jf", "test", "--for=condition=Succeed", "--timeout", "0s")
    assert (not_met.exit_code, not_met.stderr) == (
        1,
        "error: timed out waiting for the condition on jobflows/test\n",
    )


def test_a_missing_object_is_not_found(vc: Vc) -> None:
    result = vc("wait", "jf", "nope", PHASE)
    assert result.exit_code == 1
    assert result.stderr == (
        'Error from server (NotFound): jobflows.flow.volcano.sh "nope" not found\n'
    )
    assert vc("wait", "jf", "--all", PHASE).stderr == "error: no matching resources found\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["wait", "jf", "test"], "give --for=jsonpath=PATH=VALUE"),
        (["wait", "jf", "test", "--for=ready"], 'unrecognized condition: "ready"'),
        (["wait", "jf", "test", "--for=jsonpath={.a"], 'unclosed "{"'),
        (["wait", "jf", "test", PHASE, "--timeout", "10"], 'invalid duration "10"'),
        (["wait", "jf", PHASE], "give the objects' names"),
        (["wait", "jf", "test", "--all", PHASE], "name cannot be provided"),
    ],
)
def test_usage_errors(vc: Vc, args: list[str], message: str) -> None:
    result = vc(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())


def test_wait_through_a_server(running_server: Server, tmp_path: Path) -> None:  # noqa: F811
    """Remote: `vcflow wait --kubeconfig` follows the server's run of the flow."""
    manifest, go = blocked_flow(tmp_path)
    kubeconfig = ("--kubeconfig", str(running_server.state_dir / "kubeconfig"))
    vcflow = [sys.executable, "-m", "vcflow", *kubeconfig]
    applied = subprocess.run([*vcflow, "apply", "-f", str(manifest)], capture_output=True)
    assert applied.returncode == 0, applied.stderr
    route = "GET /apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows/f "
    try:
        before = running_server.log.read_text().count(route)
        with waiting(*kubeconfig, "wait", "jobflow", "f", PHASE, "--timeout", "2m") as w:
            wait_until(
                lambda: (
                    running_server.log.read_text().count(route) > before or w.poll() is not None
                ),
                "wait to read",
            )
            assert w.poll() is None
            go.touch()
            out, err = w.communicate(timeout=DEADLINE)
        assert (w.returncode, out) == (0, "jobflow.flow.volcano.sh/f condition met\n"), err
        timed = subprocess.run(
            [*vcflow, "wait", "jf", "f", "--for=condition=Failed", "--timeout", "0.2s"],
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        assert (timed.returncode, timed.stderr) == (
            1,
            "error: timed out waiting for the condition on jobflows/f\n",
        )
    finally:
        go.touch()


def test_help_lists_wait() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vcflow", "--help"], capture_output=True, text=True, timeout=60
    )
    assert " wait " in done.stdout
