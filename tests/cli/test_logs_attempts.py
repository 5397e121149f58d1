"""`vcflow logs` of a pod's earlier attempts, with real processes: the logs of the pods that
RestartJob, RestartPod and an interrupted run deleted are kept and reached with `-p` (the run
before the current one) and `--attempt N`; `--attempts` lists them; the closing report of a
job whose failed pod its policy deleted still shows that pod's log."""

from __future__ import annotations

import signal
from pathlib import Path

from typer.testing import Result

from .conftest import Rows, Vc
from .flows import ended, running, template, wait_for

POD = "r-t-0"


def restarted_job(count: Path, action: str, then: str = "exit 1") -> str:
    """Vcjob `r`: its container prints which attempt it is (1, 2, ...), then runs `then`."""
    script = f'echo x >> {count}; echo "attempt $(($(wc -l < {count})))"; {then}'
    policies = f"\n  maxRetry: 3\n  policies: [{{event: PodFailed, action: {action}}}]"
    return template("r", script, kind="Job", plugins=False, spec=policies)


def ran(vc: Vc, tmp_path: Path, action: str) -> Result:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(restarted_job(tmp_path / "count", action))
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 1, result.output
    return result


def log(vc: Vc, *args: str) -> str:
    result = vc("logs", POD, *args)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_attempt_of_a_restarted_job_is_kept(vc: Vc, tmp_path: Path, rows: Rows) -> None:
    ran(vc, tmp_path, "RestartJob")  # 3 attempts (maxRetry 3), the last pod kept Failed
    assert log(vc) == "attempt 3\n"
    assert log(vc, "-p") == "attempt 2\n"
    assert log(vc, "--attempt", "1") == "attempt 1\n"
    assert log(vc, "--attempt", "2", "-p") == "attempt 1\n"
    assert log(vc, "--attempt", "-1") == "attempt 3\n"
    assert log(vc, "--attempt=-3") == "attempt 1\n"
    assert log(vc, "--attempt", "3", "--tail", "1", "-c", "main") == "attempt 3\n"
    listed = rows(log(vc, "--attempts"))
    assert [r["ATTEMPT"] for r in listed] == ["1", "2", "3 (current)"]
    assert {r["PHASE"] for r in listed} == {"Failed"}
    assert len({r["UID"] for r in listed}) == 3
    assert all(r["FINISHED"].endswith("Z") for r in listed)  # the current one's too
    missing = vc("logs", POD, "--attempt", "7")
    assert missing.exit_code == 1
    assert missing.stderr == f'pod "{POD}" has no attempt 7: the attempts known are 1-3\n'
    first = vc("logs", POD, "--attempt", "1", "-p")
    assert first.exit_code == 1
    assert 'previous terminated container "main" in pod "r-t-0" not found' in first.stderr


def test_the_report_shows_the_log_of_a_failed_pod_its_policy_deleted(
    vc: Vc, tmp_path: Path
) -> None:
    result = ran(vc, tmp_path, "RestartPod")  # each failed pod is deleted, none is left
    assert vc("get", "pods").stderr.startswith("No resources found")
    assert "exit code 1 (Error): pod r-t-0 (attempt 3, deleted), container main" in result.stdout
    assert "(vcflow logs r-t-0 -c main --attempt 3):\n  attempt 3\n" in result.stdout
    # the pod is gone: its latest attempt is what `logs` shows
    assert log(vc) == "attempt 3\n"
    assert log(vc, "-p") == "attempt 2\n"


def test_a_rerun_after_ctrl_c_keeps_the_interrupted_attempts_log(
    vc: Vc, tmp_path: Path, marker: str, rows: Rows
) -> None:
    count = tmp_path / "count"
    manifest = tmp_path / "job.yaml"
    then = f"[ $(wc -l < {count}) -ge 2 ] || {marker}"  # the first attempt runs until stopped
    manifest.write_text(restarted_job(count, "RestartJob", then))
    with running(tmp_path / "state", manifest) as proc:
        wait_for(count, 1)
        code, out, err = ended(proc, signal.SIGINT)
    assert code == 130, out + err
    # evicted: created again, not started yet; the interrupted attempt is the previous one
    waiting = vc("logs", POD)
    assert waiting.exit_code == 1
    assert waiting.stderr == f'pod "{POD}" has no logs yet: it is Pending and has not started\n'
    assert log(vc, "-p") == "attempt 1\n"
    assert [r["ATTEMPT"] for r in rows(log(vc, "--attempts"))] == ["1", "2 (current)"]
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 0, result.output
    assert log(vc) == "attempt 2\n"
    assert log(vc, "-p") == "attempt 1\n"
    assert log(vc, "--attempt", "1") == "attempt 1\n"
    assert [r["ATTEMPT"] for r in rows(log(vc, "--attempts"))] == ["1", "2 (current)"]
