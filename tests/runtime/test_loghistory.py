"""The logs of a pod's earlier attempts: kept (not the spec, nor the files) when its directory
is removed or replaced by a pod of the same name, numbered in the order they ran, bounded,
and read across attempts (`previous` of an attempt's first run is the attempt before's)."""

from __future__ import annotations

import json
from pathlib import Path

from vcflow.runtime import loghistory, logs
from vcflow.runtime.launch import PodFile
from vcflow.runtime.pods import PodRunner

from .conftest import finished, make_runner, pod, request, sh, shut_down


def run_once(runner: PodRunner, uid: str, script: str, policy: str = "Never") -> Path:
    """Pod `p` (of uid `uid`) run to its end; its directory."""
    req = request(
        "p",
        pod(sh("c", script), policy=policy),
        uid=uid,
        labels={"volcano.sh/job-name": "j"},
        files={"secret.txt": PodFile("s3cr3t")},
    )
    handle = runner.launch(req)
    finished(runner, handle)
    return handle.pod_dir


def history(runner: PodRunner) -> Path:
    return loghistory.history_dir(runner.state_dir, "ns", "p")


def test_removing_a_pod_keeps_its_logs_and_record_only(runner: PodRunner) -> None:
    pod_dir = run_once(runner, "u1", "echo hello; exit 3")
    handle = runner.adopt("ns", "p")
    assert handle is not None and runner.remove(handle)
    assert not pod_dir.exists()
    (kept,) = loghistory.kept(history(runner))
    assert kept.number == 1 and kept.uid == "u1"
    assert sorted(p.name for p in kept.directory.iterdir()) == ["attempt.json", "c.0.log"]
    assert (kept.directory / "c.0.log").read_bytes() == b"hello\n"
    record = json.loads((kept.directory / "attempt.json").read_text())
    assert record["labels"] == {"volcano.sh/job-name": "j"}
    assert record["containers"] == ["c"]
    assert record["status"]["phase"] == "Failed"
    assert record["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3
    assert record["finishedAt"] and record["keptAt"]


def test_a_pod_of_the_same_name_replacing_an_ended_one_keeps_its_logs(
    runner: PodRunner,
) -> None:
    run_once(runner, "u1", "echo first")
    run_once(runner, "u2", "echo second")  # (an evicted pod's directory, run again)
    found = loghistory.attempts(runner.state_dir, "ns", "p")
    assert [(a.number, a.uid, a.current) for a in found] == [(1, "u1", False), (2, "u2", True)]
    assert logs.run_log(found, found[-1], "c") == found[-1].directory / "c.0.log"
    previous = logs.run_log(found, found[-1], "c", previous=True)
    assert previous is not None and previous.read_bytes() == b"first\n"


def test_previous_is_an_in_place_restart_before_the_previous_attempt(
    runner: PodRunner, tmp_path: Path
) -> None:
    count = tmp_path / "count"
    run_once(runner, "u1", "echo attempt-1")
    script = f'echo x >> {count}; n=$(wc -l < {count}); echo "run $n"; [ "$n" -ge 2 ]'
    run_once(runner, "u2", script, policy="OnFailure")
    found = loghistory.attempts(runner.state_dir, "ns", "p")
    current, first = found[-1], found[0]

    def text(path: Path | None) -> bytes:
        assert path is not None
        return path.read_bytes()

    assert text(logs.run_log(found, current, "c")) == b"run 2\n"
    assert text(logs.run_log(found, current, "c", previous=True)) == b"run 1\n"
    assert text(logs.run_log(found, first, "c")) == b"attempt-1\n"
    assert logs.run_log(found, first, "c", previous=True) is None


def test_only_the_last_attempts_are_kept_and_keep_their_numbers(tmp_path: Path) -> None:
    runner = make_runner(tmp_path / "state", keep_attempts=2)
    try:
        for n in range(1, 5):
            run_once(runner, f"u{n}", f"echo {n}")
        handle = runner.adopt("ns", "p")
        assert handle is not None and runner.remove(handle)
        found = loghistory.attempts(runner.state_dir, "ns", "p")
        assert [(a.number, a.uid) for a in found] == [(3, "u3"), (4, "u4")]
        assert (found[0].directory / "c.0.log").read_bytes() == b"3\n"
        picked = logs.pick_attempt(found, -2, "p")
        assert picked.number == 3
    finally:
        shut_down(runner)


def test_keeping_again_after_a_crash_half_way_completes_the_same_attempt(
    runner: PodRunner,
) -> None:
    pod_dir = run_once(runner, "u1", "echo hi")
    kept = loghistory.keep(pod_dir, history(runner))
    assert kept is not None and kept.number == 1
    (kept.directory / "c.0.log").rename(pod_dir / "c.0.log")  # as if cut short
    again = loghistory.keep(pod_dir, history(runner))
    assert again is not None and again.number == 1
    assert (again.directory / "c.0.log").read_bytes() == b"hi\n"
    assert [a.number for a in loghistory.kept(history(runner))] == [1]


def test_a_pod_never_launched_keeps_nothing(runner: PodRunner, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert loghistory.keep(empty, history(runner)) is None
    assert not history(runner).exists()
    assert loghistory.attempts(runner.state_dir, "ns", "p") == []
