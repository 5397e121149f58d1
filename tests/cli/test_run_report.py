"""What `vcflow run` reports: the closing table in flow order with why each failed job
failed (and its log's last lines), a rerun's run time, what it refuses before writing, and
its usage errors; the live view's order when the terminal is short."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.cli.runview import LiveView
from vcflow.local.progress import Progress

from .conftest import RunOne, Vc
from .flows import jobflow, template


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    return tmp_path / "flow.yaml"


def table(stdout: str) -> list[list[str]]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("FLOW "))
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip() or line.startswith(("flow ", "vcjob ")):
            break
        rows.append(line.split())
    return rows


def test_the_table_keeps_flow_order_and_says_why_a_job_failed(vc: Vc, manifest: Path) -> None:
    manifest.write_text(
        template("zeta", "true")
        + template("alpha", 'echo first line; echo "no such file: data.csv" >&2; exit 7')
        + template("mid", "true")
        + jobflow("f", "zeta", "alpha<zeta", "mid<alpha")
    )
    result = vc("run", "-f", manifest, "--no-live")
    assert result.exit_code == 1
    rows = table(result.stdout)
    assert [row[:3] for row in rows] == [
        ["f", "zeta", "Completed"],
        ["f", "alpha", "Failed"],
        ["f", "mid", "Waiting"],
    ]
    assert " ".join(rows[1][4:]) == "exit code 7 (Error): pod f-alpha-t-0, container main"
    assert "Dependencies: waiting for all of: alpha" in " ".join(rows[2])
    assert "f/alpha: the last lines of its log (vcflow logs f-alpha-t-0 -c main):" in (
        result.stdout
    )
    assert "  first line\n  no such file: data.csv\n" in result.stdout


def test_a_rerun_of_a_finished_flow_prints_its_run_time_not_its_age(
    vc: Vc, run_one: RunOne
) -> None:
    first = run_one("sleep 0.5")
    assert first.result.exit_code == 0
    time.sleep(2.2)  # the flow is older now than it ran
    result = vc("run", "-f", first.manifest, "--no-live")
    assert result.exit_code == 0
    summary = next(line for line in result.stdout.splitlines() if line.startswith("flow f "))
    shown = summary.split(" in ")[1].split("s")[0]  # (stored times: whole seconds, or "<1")
    seconds = 0.0 if shown.startswith("<") else float(shown)
    assert seconds < 2.0, summary
    assert summary.endswith("(it had ended before this run)")


def test_nothing_to_run_is_refused_before_anything_is_written(
    vc: Vc, manifest: Path, state_dir: Path
) -> None:
    manifest.write_text(template("a", "true"))
    result = vc("run", "-f", manifest)
    assert result.exit_code == 1
    assert result.stderr.startswith("nothing to run: no JobFlow or vcjob among the objects")
    assert "created" not in result.stdout
    assert not (state_dir / "vcflow.db").exists()


@pytest.mark.parametrize(("code", "phase", "exit_code"), [(0, "Completed", 0), (4, "Failed", 1)])
def test_a_vcjob_applied_alone_is_run_to_its_end(
    vc: Vc, manifest: Path, code: int, phase: str, exit_code: int
) -> None:
    env = f"\n              env: [{{name: CODE, value: '{code}'}}]"
    manifest.write_text(
        template("alone", "exit $CODE", kind="Job", replicas=2, image="x", extra=env)
    )
    result = vc("run", "-f", manifest, "--no-live")
    assert result.exit_code == exit_code, result.output
    assert f"vcjob alone {phase}" in result.stdout
    assert [row[:3] for row in table(result.stdout)] == [["-", "alone", phase]]
    listed = vc("get", "vcjob", "alone", "-o", "json")
    assert f'"phase": "{phase}"' in listed.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--timeout", "-3"], "-3 is not a number of seconds > 0"),
        (["--timeout", "0"], "0 is not a number of seconds > 0"),
        (["--capacity", "cpu=lots"], "'lots' is not a quantity"),
        (["--capacity", "cpu"], "expected resource=quantity"),
        (["--capacity", "gpu=1"], "unknown resource 'gpu'; did you mean 'nvidia.com/gpu'?"),
    ],
)
def test_bad_options_are_usage_errors(
    vc: Vc, manifest: Path, args: list[str], message: str
) -> None:
    manifest.write_text(template("a", "true") + jobflow("f", "a"))
    result = vc("run", "-f", manifest, *args)
    assert result.exit_code == 2
    assert message in result.stderr


def _flow(name: str, entries: int) -> JobFlow:
    flows = [{"name": f"e{i}"} for i in range(entries)]
    return JobFlow.from_dict(
        {"metadata": {"name": name, "namespace": "default", "uid": "u"}, "spec": {"flows": flows}}
    )


def _job(flow: JobFlow, entry: str, phase: str) -> VCJob:
    ref = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "name": flow.name}
    return VCJob.from_dict(
        {
            "metadata": {
                "name": f"{flow.name}-{entry}",
                "namespace": "default",
                "ownerReferences": [{**ref, "uid": "u", "controller": True}],
            },
            "status": {"state": {"phase": phase}},
        }
    )


def test_a_short_terminal_shows_running_and_failed_jobs_first() -> None:
    flow = _flow("f", 30)
    progress = Progress([flow], now=lambda: 100.0)
    for i in range(20):
        progress.observe(_job(flow, f"e{i}", "Completed"), False)
    progress.observe(_job(flow, "e25", "Running"), False)
    progress.observe(_job(flow, "e26", "Failed"), False)
    view = LiveView(progress, lambda: 8)
    text = "\n".join(line.plain for line in view.render().renderables)  # type: ignore[attr-defined]
    shown = [line.split()[0] for line in text.splitlines()[1:] if not line.startswith("  …")]
    assert shown[:2] == ["e25", "e26"]
    assert len(text.splitlines()) <= 8
    assert "… and" in text and "more" in text


def test_the_live_view_says_why_a_job_failed_and_why_an_entry_waits() -> None:
    flow = _flow("f", 3)
    progress = Progress([flow], now=lambda: 100.0)
    failed = progress.observe(_job(flow, "e0", "Failed"), False)
    assert failed is not None
    failed.failure = "exit code 3 (Error): pod f-e0-t-0, container main"
    progress.flows[flow.key].jobs["f-e1"].waiting = "TemplateNotFound: no JobTemplate e1"
    view = LiveView(progress, lambda: 40)
    text = "\n".join(line.plain for line in view.render().renderables)  # type: ignore[attr-defined]
    assert "e0  Failed" in text and "exit code 3 (Error): pod f-e0-t-0, container main" in text
    assert "e1  Waiting" in text and "TemplateNotFound: no JobTemplate e1" in text


def test_what_a_failed_job_printed_is_shown_escaped(run_one: RunOne) -> None:
    """A log line with an OSC title sequence is shown, not obeyed by the terminal."""
    result = run_one(r'printf "\033]0;pwned\007tail\n"; exit 1').result
    assert result.exit_code == 1
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "  \\x1b]0;pwned\\x07tail\n" in result.stdout
