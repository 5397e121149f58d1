"""The flow language from the command line (docs/flow-features.md part II), with real job
processes: entries that share a JobTemplate through `template` (run, described, the template
refused as in use, waited for under its name); arguments given with `-p` on `run`, `apply`
and `resubmit`, read by the job in `VCFLOW_ARGS`, kept by `retry`; an unknown name (exit 2,
one line), a required one left without a value, a malformed `-p`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from vcflow.api import names
from vcflow.api.vcjob import VCJob
from vcflow.store import SqliteStore

from .flows import flow, template

Vc = Callable[..., Result]


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    return tmp_path / "flow.yaml"


def squeezed(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


SHARED = flow(
    "f",
    "{name: one, template: worker}",
    "{name: two, template: worker, dependsOn: {targets: [one]}}",
)


def test_two_entries_run_one_template(vc: Vc, manifest: Path, state_dir: Path) -> None:
    manifest.write_text(template("worker", "echo hello from worker") + SHARED)
    result = vc("run", "-f", manifest, "--no-live", "--timeout", "60")
    assert result.exit_code == 0, result.output
    assert "flow f Succeed" in result.stdout
    rows = [line.split()[:3] for line in result.stdout.splitlines() if line.startswith("f ")]
    assert rows == [["f", "one", "Completed"], ["f", "two", "Completed"]]
    with SqliteStore.in_state_dir(state_dir) as store:
        for job in ("f-one", "f-two"):
            labels = store.get(VCJob, "default", job).metadata.labels
            assert labels[names.LABEL_CREATED_BY_TEMPLATE] == "default.worker"
    logs = vc("logs", "f-two-t-0")
    assert logs.stdout == "hello from worker\n"
    described = squeezed(vc("describe", "jf", "f").stdout)
    assert "NAME TEMPLATE DEPENDS ON STRATEGY PATCH" in described
    assert "two worker one all no" in described
    template_described = vc("describe", "jt", "worker").stdout
    assert "f-one" in template_described and "f-two" in template_described


def test_a_template_a_running_flow_uses_is_not_deleted(
    vc: Vc, manifest: Path, state_dir: Path
) -> None:
    manifest.write_text(template("worker", "true") + SHARED)
    applied = vc("apply", "-f", manifest)
    assert applied.exit_code == 0, applied.output
    refused = vc("delete", "jt", "worker")
    assert refused.exit_code == 1
    assert refused.stderr.strip().endswith(
        'cannot delete JobTemplate "worker": unfinished JobFlow(s) f use it; stop or delete '
        "them first"
    ), refused.stderr


def test_a_missing_template_is_waited_for_under_its_name(vc: Vc, manifest: Path) -> None:
    manifest.write_text(SHARED)
    applied = vc("apply", "-f", manifest)
    assert applied.exit_code == 0, applied.output
    assert (
        'spec.flows[0].template: JobTemplate "worker" not found; the entry will wait '
        "(TemplateNotFound)" in applied.stderr
    )
    described = squeezed(vc("describe", "jf", "f").stdout)
    assert (
        'f-one Waiting TemplateNotFound jobtemplate.flow.volcano.sh "worker" not found' in described
    )


# -- arguments --------------------------------------------------------------------------------

ARGUMENTS = """\
  arguments:
    - {name: threshold, description: the accuracy to deploy at}
    - {name: target, value: cpu}
"""
ARGS = flow("f", "name: show", spec=ARGUMENTS)


def test_p_gives_a_value_the_job_reads_in_vcflow_args(
    vc: Vc, manifest: Path, state_dir: Path
) -> None:
    manifest.write_text(template("show", 'echo "args: $VCFLOW_ARGS"') + ARGS)
    result = vc("run", "-f", manifest, "-p", "threshold=0.95", "--no-live", "--timeout", "60")
    assert result.exit_code == 0, result.output
    assert vc("logs", "f-show-t-0").stdout == 'args: {"threshold":"0.95","target":"cpu"}\n'
    stored = vc("get", "jf", "f", "-o", "jsonpath={.spec.arguments[0].value}").stdout
    assert stored == "0.95"
    described = squeezed(vc("describe", "jf", "f").stdout)
    assert "NAME VALUE DESCRIPTION" in described
    assert "threshold 0.95 the accuracy to deploy at" in described
    assert "target cpu" in described


def test_an_unknown_argument_is_one_line_exit_2_and_nothing_is_written(
    vc: Vc, manifest: Path, state_dir: Path
) -> None:
    manifest.write_text(template("show", "true") + ARGS)
    for verb in ("run", "apply"):
        result = vc(verb, "-f", manifest, "-p", "treshold=0.95")
        assert result.exit_code == 2, result.output
        assert result.stderr == 'unknown argument "treshold"; did you mean "threshold"?\n'
        assert result.stdout == ""
    assert not (state_dir / "vcflow.db").exists()


def test_a_required_argument_without_a_value_is_refused(
    vc: Vc, manifest: Path, state_dir: Path
) -> None:
    manifest.write_text(template("show", "true") + ARGS)
    result = vc("run", "-f", manifest, "--no-live")
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        f"{manifest}:24 (document 2): JobFlow default/f: spec.arguments[0]: required argument "
        '"threshold" has no value: give it with -p threshold=...\n'
    )
    assert not (state_dir / "vcflow.db").exists()


def test_a_malformed_p_is_a_usage_error(vc: Vc, manifest: Path) -> None:
    manifest.write_text(template("show", "true") + ARGS)
    result = vc("apply", "-f", manifest, "-p", "threshold")
    assert result.exit_code == 2
    assert "'threshold' is not NAME=VALUE" in result.stderr
    without = vc("run", "-p", "threshold=1")
    assert without.exit_code == 2
    assert "give -f with it" in without.stderr


def test_apply_p_stores_the_value_and_resubmit_p_changes_the_copy_only(
    vc: Vc, manifest: Path
) -> None:
    manifest.write_text(template("show", "true") + ARGS)
    applied = vc("apply", "-f", manifest, "-p", "threshold=0.9", "-p", "target=gpu")
    assert applied.exit_code == 0, applied.output
    values = "jsonpath={.spec.arguments[*].value}"
    assert vc("get", "jf", "f", "-o", values).stdout == "0.9 gpu"
    copied = vc("resubmit", "jf", "f", "--name", "g", "-p", "target=tpu")
    assert copied.exit_code == 0, copied.output
    assert vc("get", "jf", "g", "-o", values).stdout == "0.9 tpu"
    assert vc("get", "jf", "f", "-o", values).stdout == "0.9 gpu"
    unknown = vc("resubmit", "jf", "f", "--name", "h", "-p", "targte=x")
    assert unknown.exit_code == 2
    assert unknown.stderr == 'unknown argument "targte"; did you mean "target"?\n'
    assert vc("get", "jf", "h").exit_code == 1


def test_retry_keeps_the_arguments(vc: Vc, manifest: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    script = f'echo "$VCFLOW_ARGS" >> {runs}; test $(wc -l < {runs}) -ge 2'
    manifest.write_text(template("show", script) + ARGS)
    first = vc("run", "-f", manifest, "-p", "threshold=0.5", "--no-live", "--timeout", "60")
    assert first.exit_code == 1, first.output
    assert vc("retry", "jf", "f").exit_code == 0
    again = vc("run", "--no-live", "--timeout", "60")
    assert again.exit_code == 0, again.output
    assert runs.read_text().splitlines() == ['{"threshold":"0.5","target":"cpu"}'] * 2


def vcflow(state_dir: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """`vcflow --state-dir STATE ARGS...` as its own process."""
    return subprocess.run(
        [sys.executable, "-m", "vcflow", "--state-dir", str(state_dir), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_as_processes_p_reaches_the_job_and_an_unknown_name_is_one_line(
    manifest: Path, state_dir: Path
) -> None:
    manifest.write_text(template("show", 'echo "args: $VCFLOW_ARGS"') + ARGS)
    unknown = vcflow(state_dir, "run", "-f", manifest, "-p", "treshold=1", "--no-live")
    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert unknown.stderr == 'unknown argument "treshold"; did you mean "threshold"?\n'
    missing = vcflow(state_dir, "run", "-f", manifest, "--no-live")
    assert missing.returncode == 1
    assert len(missing.stderr.splitlines()) == 1
    assert 'required argument "threshold" has no value' in missing.stderr
    ran = vcflow(state_dir, "run", "-f", manifest, "-p", "threshold=x y", "--no-live")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    logs = vcflow(state_dir, "logs", "f-show-t-0")
    assert logs.stdout == 'args: {"threshold":"x y","target":"cpu"}\n'
