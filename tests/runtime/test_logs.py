"""Container logs: stdout and stderr in one file per run, current and previous, follow."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from vcflow.runtime import logs
from vcflow.runtime.pods import PodRunner

from .conftest import finished, pod, request, sh, wait_until


def test_stdout_and_stderr_interleaved(runner: PodRunner) -> None:
    handle = runner.launch(request("out", pod(sh("c", "echo one; echo two >&2; echo three"))))
    finished(runner, handle)
    assert logs.read_log(handle.pod_dir, "c") == b"one\ntwo\nthree\n"
    assert logs.read_log(handle.pod_dir, "c", tail=2) == b"two\nthree\n"
    assert logs.read_log(handle.pod_dir, "c", tail=0) == b""
    assert logs.log_path(handle.pod_dir, "c") == handle.pod_dir / "c.0.log"


def test_current_and_previous_runs(runner: PodRunner, tmp_path: Path) -> None:
    count = tmp_path / "count"
    script = f'echo x >> {count}; n=$(wc -l < {count}); echo "run $n"; [ "$n" -ge 2 ]'
    handle = runner.launch(request("prev", pod(sh("c", script), policy="OnFailure")))
    finished(runner, handle)
    assert logs.read_log(handle.pod_dir, "c") == b"run 2\n"
    assert logs.read_log(handle.pod_dir, "c", previous=True) == b"run 1\n"


def test_names_and_errors(runner: PodRunner) -> None:
    spec = pod(sh("main", "true"), sh("side", "true"), initContainers=[sh("init", "true")])
    handle = runner.launch(request("names", spec))
    finished(runner, handle)
    assert logs.container_names(handle.pod_dir) == ["init", "main", "side"]
    assert logs.default_container(handle.pod_dir) == "main"
    with pytest.raises(logs.LogsError, match='container "nope" is not valid for pod "names"'):
        logs.read_log(handle.pod_dir, "nope")
    with pytest.raises(logs.LogsError, match='previous terminated container "main"'):
        logs.read_log(handle.pod_dir, "main", previous=True)
    with pytest.raises(logs.LogsError, match="not found"):
        logs.read_log(handle.pod_dir.parent / "missing", "main")


def test_follow_streams_until_the_run_ends(runner: PodRunner, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    script = f"echo first; while [ ! -e {gate} ]; do sleep 0.01; done; echo last"
    handle = runner.launch(request("follow", pod(sh("c", script))))
    wait_until(runner, handle, lambda s: s.phase == "Running")
    chunks: list[bytes] = []
    seen_first = threading.Event()

    def reader() -> None:
        for chunk in logs.follow(handle.pod_dir, "c", poll_interval=0.01):
            chunks.append(chunk)
            if b"first" in b"".join(chunks):
                seen_first.set()

    thread = threading.Thread(target=reader)
    thread.start()
    assert seen_first.wait(10)
    gate.touch()
    thread.join(10)
    assert not thread.is_alive()
    assert b"".join(chunks) == b"first\nlast\n"


def test_follow_a_finished_pod_returns_its_log(runner: PodRunner) -> None:
    handle = runner.launch(request("ended", pod(sh("c", "echo a; echo b"))))
    finished(runner, handle)
    assert b"".join(logs.follow(handle.pod_dir, "c", tail=1)) == b"b\n"


def test_follow_stops_at_the_end_of_the_current_run(runner: PodRunner) -> None:
    handle = runner.launch(request("loop", pod(sh("c", "echo run; exit 1"), policy="Always")))
    wait_until(runner, handle, lambda s: bool(s.containers) and s.containers[0].restart_count >= 1)
    assert b"".join(logs.follow(handle.pod_dir, "c", poll_interval=0.01)) == b"run\n"
