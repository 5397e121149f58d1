"""The CLI's remote mode against a real `vcflow server` process: every verb prints what it
prints embedded (ages, times, uids and resourceVersions aside), `--server` / VCFLOW_TOKEN /
a server owning the state directory, `get -w`, `run -f` following the server's run,
`logs jobflow/NAME` (and `-f`) of a flow the server runs, and the one-line errors (401
without the token, a refused connection)."""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest
import yaml
from typer.testing import CliRunner, Result

from vcflow.cli.app import app

from .conftest import EXAMPLE, Vc
from .flows import followed, gated_flow, jobflow, template

DEADLINE = 60.0
TOKEN = "s3cret-token"


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    state_dir: Path
    url: str
    log: Path


def _start(tmp: Path, *args: str) -> Server:
    state_dir = tmp / "served"
    log = tmp / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*_cli("server", "--state-dir", str(state_dir)), "--port", "0", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        try:
            info = json.loads((state_dir / "server.json").read_text())
        except (OSError, ValueError):
            info = {}
        if info.get("pid") == proc.pid:
            return Server(proc, state_dir, info["url"], log)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"the server did not start: {log.read_text()}")


def _stop(server: Server) -> None:
    if server.proc.poll() is None:
        server.proc.send_signal(signal.SIGTERM)
        try:
            server.proc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    """A server with its controllers and no runtime (as embedded writers: no pods run),
    requiring a token."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    server = _start(tmp_path, "--runtime", "none", "--token-file", str(token_file))
    yield server
    _stop(server)


Remote = Callable[..., Result]


@pytest.fixture
def remote(served: Server, monkeypatch: pytest.MonkeyPatch) -> Remote:
    """`remote("get", "jf")` runs `vcflow get jf --server URL --certificate-authority CA`
    (the CA the server made) with VCFLOW_TOKEN set."""
    monkeypatch.setenv("VCFLOW_TOKEN", TOKEN)
    runner = CliRunner()
    ca = str(served.state_dir / "serving" / "ca.crt")

    def invoke(*args: str | Path) -> Result:
        return runner.invoke(
            app, [*(str(a) for a in args), "--server", served.url, "--certificate-authority", ca]
        )

    return invoke


_VARYING = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "<time>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uid>"),
    (re.compile(r"(Resource Version:\s+)\d+"), r"\1<rv>"),
    (re.compile(r"(resourceVersion: )'\d+'"), r"\1<rv>"),
    (re.compile(r"\b\d+(\.\d+)?(s|m|h|d)\b( ago)?"), "<age>"),
    (re.compile(r" +"), " "),
]


def normalized(result: Result) -> tuple[int, str, str]:
    def clean(text: str) -> str:
        for pattern, replacement in _VARYING:
            text = pattern.sub(replacement, text)
        return text

    return result.exit_code, clean(result.stdout), clean(result.stderr)


def same_eventually(remote: Remote, vc: Vc, *args: str | Path) -> tuple[int, str, str]:
    """The command's output remote and embedded, once equal (the server's controllers run
    after the write returns; embedded ones before): the embedded one."""
    want = normalized(vc(*args))
    end = time.monotonic() + DEADLINE
    got = normalized(remote(*args))
    while got != want and time.monotonic() < end:
        time.sleep(0.1)
        got = normalized(remote(*args))
    if got != want:
        diff = difflib.unified_diff(want[1].splitlines(), got[1].splitlines(), lineterm="")
        pytest.fail(
            f"{args}: remote {got[0]} {got[2]!r} / embedded {want[0]} {want[2]!r}\n"
            + "\n".join(diff)
        )
    return want


def test_every_verb_prints_as_embedded(remote: Remote, vc: Vc, tmp_path: Path) -> None:
    applied = same_eventually(remote, vc, "apply", "-f", EXAMPLE)
    assert "jobflow.flow.volcano.sh/test created" in applied[1]
    assert same_eventually(remote, vc, "apply", "-f", EXAMPLE)[1].count("unchanged") == 6
    for args in (
        ("get", "jf"),
        ("get", "jt", "-o", "wide"),
        ("get", "vcjob"),
        ("get", "jt", "a", "-o", "yaml"),
        ("get", "jf", "test", "nope"),
        ("describe", "jt", "a"),
        ("describe", "vcjob", "test-a"),
        ("validate", "-f", EXAMPLE),
        ("get", "jf", "-o", "wide"),
        ("graph", "jf", "test", "-o", "dot"),
        ("graph", "jf", "test", "-o", "mermaid"),
        ("graph", "jf", "nope"),
    ):
        same_eventually(remote, vc, *args)
    status = json.dumps({"status": {"state": {"phase": "Running"}}})
    patch = ("patch", "vcjob", "test-a", "--subresource", "status", "--type", "merge", "-p")
    assert same_eventually(remote, vc, *patch, status)[0] == 0
    assert same_eventually(remote, vc, "suspend", "vcjob", "test-a")[0] == 0
    same_eventually(remote, vc, "get", "command")
    assert same_eventually(remote, vc, "delete", "jf", "test")[0] == 1  # unfinished: refused
    assert same_eventually(remote, vc, "stop", "jobflow", "test")[0] == 0
    assert same_eventually(remote, vc, "delete", "jf", "test", "nope")[0] == 1
    same_eventually(remote, vc, "get", "jf")
    same_eventually(remote, vc, "delete", "-f", EXAMPLE, "--ignore-not-found")


def test_retry_and_resubmit_through_the_server_name_no_run(remote: Remote, vc: Vc) -> None:
    """The server runs what they write: no `run it with: vcflow run` as embedded."""
    assert same_eventually(remote, vc, "apply", "-f", EXAMPLE)[0] == 0
    assert remote("stop", "jobflow", "test").exit_code == 0
    phase = ("get", "jf", "test", "-o", "jsonpath={.status.state.phase}")
    end = time.monotonic() + DEADLINE
    while remote(*phase).stdout != "Failed":  # (the server's controllers stop it)
        assert time.monotonic() < end, remote(*phase).output
        time.sleep(0.05)
    retried = remote("retry", "jobflow", "test")
    assert (retried.exit_code, retried.stdout) == (0, "jobflow.flow.volcano.sh/test retried\n")
    made = remote("resubmit", "jf", "test", "--name", "again")
    assert (made.exit_code, made.stdout) == (0, "jobflow.flow.volcano.sh/again created\n")


def test_global_flags_go_before_or_after_the_verb(
    served: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("VCFLOW_TOKEN", TOKEN)
    runner = CliRunner()
    other = tmp_path / "flows"
    other.mkdir()
    manifest = (EXAMPLE / "JobTemplate.yaml").read_text()
    (other / "t.yaml").write_text(manifest.replace("  namespace: default\n", ""))
    ca = ["--certificate-authority", str(served.state_dir / "serving" / "ca.crt")]
    applied = runner.invoke(app, ["-n", "team", "apply", "-f", str(other), "-s", served.url, *ca])
    assert applied.exit_code == 0, applied.output
    listed = runner.invoke(app, ["--server", served.url, *ca, "get", "jt", "-n", "team"])
    after = runner.invoke(app, ["-n", "team", "get", "jt", "--server", served.url, *ca])
    assert (listed.exit_code, after.exit_code) == (0, 0)
    names = [line.split()[0] for line in listed.stdout.splitlines()[1:]]
    assert names == list("abcde")  # (AGE may tick over a second between the two calls)
    assert [line.split()[0] for line in after.stdout.splitlines()[1:]] == names


def test_apply_n_refuses_an_object_of_another_namespace(vc: Vc, tmp_path: Path) -> None:
    manifest = tmp_path / "t.yaml"
    text = (
        (EXAMPLE / "JobTemplate.yaml")
        .read_text()
        .replace("name: a\n", "name: a\n  namespace: x\n", 1)
    )
    manifest.write_text(text)
    result = vc("apply", "-f", manifest, "-n", "team")
    assert result.exit_code == 1
    assert (
        'the namespace from the provided object "x" does not match the namespace "team"'
        in result.stderr
    )
    assert vc("get", "jt", "-A").stderr == "No resources found.\n"


def test_a_server_owning_the_state_directory_is_used(served: Server, vc: Vc) -> None:
    """No --server: the state directory's server.json (its token file too) is followed,
    and the write goes through the API (the server logs the request)."""
    runner = CliRunner()
    result = runner.invoke(app, ["--state-dir", str(served.state_dir), "apply", "-f", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert "jobflow.flow.volcano.sh/test created" in result.stdout
    end = time.monotonic() + DEADLINE
    while "POST /apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows" not in (
        served.log.read_text()
    ):
        assert time.monotonic() < end, served.log.read_text()
        time.sleep(0.05)


def test_without_the_token_is_one_line_unauthorized(
    served: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VCFLOW_TOKEN", raising=False)
    ca = str(served.state_dir / "serving" / "ca.crt")
    result = CliRunner().invoke(
        app, ["get", "jf", "--server", served.url, "--certificate-authority", ca]
    )
    assert result.exit_code == 1
    assert result.stderr == "error: You must be logged in to the server (Unauthorized)\n"


def test_a_refused_connection_is_one_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = CliRunner().invoke(app, ["--server", f"http://127.0.0.1:{port}", "get", "jf"])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"the connection to the server 127.0.0.1:{port} was refused" in result.stderr


@pytest.fixture
def running_server(tmp_path: Path) -> Iterator[Server]:
    """A server that runs pods (the local runtime), with the token and CA it makes."""
    server = _start(tmp_path)
    yield server
    _stop(server)
    from tests.server.conftest import stop_pods

    stop_pods(server.state_dir)


def _cli(*args: str) -> list[str]:
    env_bin = Path(sys.executable).parent
    return (
        [str(env_bin / "vcflow"), *args]
        if (env_bin / "vcflow").exists()
        else [
            sys.executable,
            "-m",
            "vcflow",
            *args,
        ]
    )


def test_run_follows_the_flows_the_server_runs(running_server: Server) -> None:
    """`vcflow run -f examples/jobflow/` against a server: applies, follows the server's
    run (no controller or pod here), prints the final table, exits 0."""
    done = subprocess.run(
        _cli(
            "run",
            "-f",
            str(EXAMPLE),
            "--kubeconfig",
            str(running_server.state_dir / "kubeconfig"),
            "--no-live",
        ),
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "VCFLOW_STATE_DIR": str(running_server.state_dir.parent / "none")},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout[done.stdout.index("FLOW   JOB") :].splitlines()
    assert [line.split()[:3] for line in table[1:6]] == [
        ["test", job, "Completed"] for job in "abcde"
    ]
    assert table[-1].startswith("flow test Succeed in ")
    assert not (running_server.state_dir.parent / "none").exists()  # nothing ran here


class Lines:
    """The lines of a child's pipe, each waited for with a deadline (a thread reads)."""

    def __init__(self, pipe: IO[str]) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, args=(pipe,), daemon=True).start()

    def _read(self, pipe: IO[str]) -> None:
        with contextlib.suppress(ValueError, OSError):  # (closed once the child ended)
            for line in pipe:
                self._lines.put(line)

    def next(self) -> str:
        try:
            return self._lines.get(timeout=DEADLINE)
        except queue.Empty:
            pytest.fail(f"no line within {DEADLINE:g}s")


def interrupted(watcher: subprocess.Popen[str]) -> None:
    """Ctrl-C to a `get -w` child; its end waited for, its pipes closed."""
    watcher.send_signal(signal.SIGINT)
    watcher.wait(timeout=DEADLINE)
    for pipe in (watcher.stdout, watcher.stderr):
        if pipe is not None:
            pipe.close()


def test_get_watch_prints_each_change(running_server: Server) -> None:
    watcher = subprocess.Popen(
        _cli("get", "jf", "-w", "--kubeconfig", str(running_server.state_dir / "kubeconfig")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stderr is not None and watcher.stdout is not None
        out, err = Lines(watcher.stdout), Lines(watcher.stderr)
        assert err.next() == "No resources found in default namespace.\n"
        applied = subprocess.run(
            _cli(
                "apply",
                "-f",
                str(EXAMPLE),
                "--kubeconfig",
                str(running_server.state_dir / "kubeconfig"),
            ),
            capture_output=True,
            timeout=60,
        )
        assert applied.returncode == 0
        assert out.next().split() == ["NAME", "STATUS", "AGE"]  # kubectl's, on the first row
        seen: list[str] = []
        while not seen or seen[-1].split()[:2] != ["test", "Running"]:
            seen.append(out.next())
        assert seen[0].split()[0] == "test"
    finally:
        interrupted(watcher)
    assert watcher.returncode == 130


FLOW = template("hi", "echo one; echo two") + jobflow("f", "hi")


def test_logs_through_the_server_are_those_read_embedded(
    running_server: Server, tmp_path: Path
) -> None:
    manifest = tmp_path / "flow.yaml"
    manifest.write_text(FLOW)
    url = str(running_server.state_dir / "kubeconfig")
    done = subprocess.run(
        _cli("run", "-f", str(manifest), "--kubeconfig", url, "--no-live"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    cases = [(), ("--tail", "1"), ("--attempt", "1"), ("-f",)]
    got = [
        subprocess.run(
            _cli("logs", "f-hi-t-0", *case, "--kubeconfig", url), capture_output=True, timeout=60
        )
        for case in cases
    ]
    missing = subprocess.run(_cli("logs", "nope", "--kubeconfig", url), capture_output=True)
    _stop(running_server)
    state = ("--state-dir", str(running_server.state_dir))
    want = [
        subprocess.run(_cli(*state, "logs", "f-hi-t-0", *case), capture_output=True, timeout=60)
        for case in cases
    ]
    assert [g.stdout for g in got] == [w.stdout for w in want]
    assert got[0].stdout == b"one\ntwo\n" and got[1].stdout == b"two\n"
    assert missing.returncode == 1
    assert missing.stderr == b'Error from server (NotFound): pods "nope" not found\n'


def test_get_watch_embedded_prints_each_change(tmp_path: Path) -> None:
    """Embedded too: the state directory's writes by another process, one row each."""
    state = ("--state-dir", str(tmp_path / "state"))
    watcher = subprocess.Popen(
        _cli(*state, "get", "jt", "-w"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert watcher.stderr is not None and watcher.stdout is not None
        out, err = Lines(watcher.stdout), Lines(watcher.stderr)
        assert err.next() == "No resources found in default namespace.\n"
        templates = str(EXAMPLE / "JobTemplate.yaml")
        applied = subprocess.run(_cli(*state, "apply", "-f", templates), capture_output=True)
        assert applied.returncode == 0, applied.stderr
        assert out.next().split() == ["NAME", "AGE"]
        names = [out.next().split()[0] for _ in range(5)]
        assert names == list("abcde")
    finally:
        interrupted(watcher)
    assert watcher.returncode == 130


def test_get_watch_yaml_prints_each_object_as_its_own_document(tmp_path: Path) -> None:
    """kubectl `get -w -o yaml`: the list's objects, then each change, one document each,
    `---` apart (it printed the list as one `kind: List`)."""
    state = ("--state-dir", str(tmp_path / "state"))
    manifest = tmp_path / "t.yaml"
    manifest.write_text(template("a", "true") + template("b", "true"))
    assert subprocess.run(_cli(*state, "apply", "-f", str(manifest)), timeout=60).returncode == 0
    watcher = subprocess.Popen(
        _cli(*state, "get", "jt", "-w", "-o", "yaml"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stdout is not None
        out = Lines(watcher.stdout)
        seen: list[str] = []

        def read_until(name: str) -> None:
            while not seen or seen[-1] != f"  name: {name}\n":
                seen.append(out.next())

        read_until("b")
        manifest.write_text(template("c", "true"))
        applied = subprocess.run(_cli(*state, "apply", "-f", str(manifest)), capture_output=True)
        assert applied.returncode == 0, applied.stderr
        read_until("c")
    finally:
        interrupted(watcher)
    documents = [yaml.safe_load(text) for text in "".join(seen).split("---\n")]
    assert [(d["kind"], d["metadata"]["name"]) for d in documents] == [
        ("JobTemplate", "a"),
        ("JobTemplate", "b"),
        ("JobTemplate", "c"),
    ]


def test_logs_of_a_flow_the_server_runs(running_server: Server, tmp_path: Path) -> None:
    """`vcflow logs jobflow/f --kubeconfig ...`: the pods of a flow the server runs, in flow
    order with `[pod/NAME/CONTAINER]` prefixes; `-f` follows the flow to its end (b's pod
    starts after the follower did)."""
    manifest, go = gated_flow(tmp_path, "a1", "a2", "echo b1; echo b2")
    kubeconfig = ("--kubeconfig", str(running_server.state_dir / "kubeconfig"))
    applied = subprocess.run(
        _cli("apply", "-f", str(manifest), *kubeconfig), capture_output=True, timeout=60
    )
    assert applied.returncode == 0, applied.stderr

    def logs(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            _cli("logs", *args, *kubeconfig), capture_output=True, text=True, timeout=60
        )

    end = time.monotonic() + DEADLINE
    while "a1" not in logs("vcjob/f-a").stdout:
        assert time.monotonic() < end, "job a's first line"
        time.sleep(0.1)
    try:
        # a's first line; then a ends, b (a new pod) runs, then the flow ends
        first, code, out, err = followed(_cli("logs", "-f", "jobflow/f", *kubeconfig), go, DEADLINE)
    finally:
        go.touch()
    assert first == "[pod/f-a-t-0/main] a1\n"
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "[pod/f-a-t-0/main] a2",
        "[pod/f-b-t-0/main] b1",
        "[pod/f-b-t-0/main] b2",
    ]
    whole = logs("jobflow/f")
    assert (whole.returncode, whole.stderr) == (0, "")
    assert whole.stdout.splitlines() == [
        "[pod/f-a-t-0/main] a1",
        "[pod/f-a-t-0/main] a2",
        "[pod/f-b-t-0/main] b1",
        "[pod/f-b-t-0/main] b2",
    ]
    assert logs("jf/f", "--tail", "1", "--no-prefix").stdout == "a2\nb2\n"
    assert logs("vcjob/f-b").stdout == "b1\nb2\n"
    state = ("--state-dir", str(running_server.state_dir))  # its server.json
    through_state = subprocess.run(
        _cli(*state, "logs", "-f", "jobflow/f"), capture_output=True, text=True, timeout=60
    )
    assert (through_state.returncode, through_state.stdout) == (0, whole.stdout)
    # --attempts lists from the state directory, which its own server's files are in
    attempts = subprocess.run(
        _cli(*state, "logs", "f-a-t-0", "--attempts"), capture_output=True, text=True, timeout=60
    )
    assert (attempts.returncode, attempts.stderr) == (0, "")
    assert [line.split()[:3] for line in attempts.stdout.splitlines()] == [
        ["ATTEMPT", "PHASE", "RESTARTS"],
        ["1", "(current)", "Succeeded"],
    ]
    named = logs("f-a-t-0", "--attempts")  # (a server named: the API lists no attempts)
    assert named.returncode == 1 and "--attempts reads the state directory" in named.stderr
    phase = subprocess.run(
        _cli("get", "jf", "f", "-o", "jsonpath={.status.state.phase}", *kubeconfig),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert phase.stdout == "Succeed"


def test_logs_of_a_flow_whose_pods_its_retain_policy_deleted(
    running_server: Server, tmp_path: Path
) -> None:
    """In the directory of the server that ran it, `vcflow logs jobflow/f` of a flow whose
    `jobRetainPolicy: delete` removed its pods shows their kept attempts, as embedded; a
    named server (--kubeconfig) has none to give."""
    manifest = tmp_path / "f.yaml"
    manifest.write_text(template("a", "echo a1") + jobflow("f", "a", retain="delete"))
    state = ("--state-dir", str(running_server.state_dir))  # its server.json
    ran = subprocess.run(
        _cli(*state, "run", "-f", str(manifest), "--no-live"), capture_output=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    end = time.monotonic() + DEADLINE
    while _cli_out(*state, "get", "pods", "--no-headers"):  # (deleted after Succeed)
        assert time.monotonic() < end, "the flow's pods deleted"
        time.sleep(0.1)
    assert _cli_out(*state, "logs", "jobflow/f") == "a1\n"
    kubeconfig = ("--kubeconfig", str(running_server.state_dir / "kubeconfig"))
    assert _cli_out("logs", "jobflow/f", *kubeconfig) == ""


def test_describe_through_a_named_server_says_why_a_job_failed(
    running_server: Server, tmp_path: Path
) -> None:
    """`vcflow describe` through a server the command names says why a failed job failed,
    from its pod's status as the API gives it, as `vcflow run`'s table says it."""
    manifest = tmp_path / "f.yaml"
    manifest.write_text(template("a", "exit 3") + jobflow("f", "a"))
    kubeconfig = ("--kubeconfig", str(running_server.state_dir / "kubeconfig"))
    ran = subprocess.run(
        _cli("run", "-f", str(manifest), "--no-live", *kubeconfig),
        capture_output=True,
        text=True,
        timeout=60,
    )
    why = "exit code 3 (Error): pod f-a-t-0, container main"
    assert ran.returncode == 1 and why in ran.stdout, ran.stdout + ran.stderr
    flow = _squeezed(_cli_out("describe", "jf", "f", *kubeconfig))
    assert f"f-a Failed {why}" in flow
    assert f"Failure: {why}" in _squeezed(_cli_out("describe", "vcjob", "f-a", *kubeconfig))


def _squeezed(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


def _cli_out(*args: str) -> str:
    done = subprocess.run(_cli(*args), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_insecure_skip_tls_verify_prints_no_python_warning(served: Server) -> None:
    """`--insecure-skip-tls-verify` is the user's choice, as kubectl's: no urllib3
    `InsecureRequestWarning` (two lines naming a site-packages file) on each request."""
    done = subprocess.run(
        _cli("get", "jf", "--server", served.url, "--insecure-skip-tls-verify"),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        env={**os.environ, "VCFLOW_TOKEN": TOKEN},
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == "No resources found in default namespace.\n"
