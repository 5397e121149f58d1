"""`vcflow.run()`, the library entry point: manifests or objects in, a `RunResult` out, with
the same rules as `vcflow run` (nothing written for bad input, nothing to run refused, the
state directory's lock), on real processes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.cli.flows import template

import vcflow
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.local import statedir
from vcflow.store import SqliteStore


def job_template(name: str, script: str) -> str:
    """JobTemplate `name` running `script`, one YAML document (no `---` after it)."""
    return template(name, script, image="x").removesuffix("---")


FLOW = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  flows:
    - name: a
    - name: b
      dependsOn: {targets: [a]}
"""


def test_run_returns_each_job_in_flow_order(tmp_path: Path) -> None:
    manifest = tmp_path / "flow.yaml"
    manifest.write_text(
        job_template("a", "true") + "---" + job_template("b", "echo bad >&2; exit 2") + "---" + FLOW
    )
    seen: list[tuple[str, str]] = []
    result = vcflow.run(
        manifest, state_dir=tmp_path / "state", on_change=lambda w, p, _: seen.append((w, p))
    )
    assert isinstance(result, vcflow.RunResult)
    assert (result.succeeded, result.exit_code) == (False, 1)
    (flow,) = result.flows
    assert (flow.name, flow.phase) == ("f", "Failed")
    assert [(j.entry, j.phase) for j in flow.jobs] == [("a", "Completed"), ("b", "Failed")]
    failure = flow.jobs[1].failure
    assert failure is not None
    assert (failure.pod, failure.container, failure.exit_code) == ("f-b-t-0", "main", 2)
    assert failure.log_tail == ("bad",)
    assert ("f/a", "Completed") in seen and ("jobflow f", "Failed") in seen


def test_run_takes_objects(tmp_path: Path) -> None:
    objects = [JobTemplate.from_dict(_yaml(job_template(n, "true"))) for n in "ab"] + [
        JobFlow.from_dict(_yaml(FLOW))
    ]
    result = vcflow.run(objects, state_dir=tmp_path / "state")
    assert result.succeeded and result.exit_code == 0


def test_bad_input_raises_and_writes_nothing(tmp_path: Path) -> None:
    manifest = tmp_path / "flow.yaml"
    manifest.write_text(FLOW)  # the templates are missing: a warning, not an error...
    bad = tmp_path / "bad.yaml"
    bad.write_text(FLOW.replace("targets: [a]", "targets: [zz]"))
    with pytest.raises(vcflow.ValidationFailed, match="vertex is not defined: zz"):
        vcflow.run(bad, state_dir=tmp_path / "state")
    assert not (tmp_path / "state").exists()


def test_nothing_to_run_is_refused(tmp_path: Path) -> None:
    manifest = tmp_path / "t.yaml"
    manifest.write_text(job_template("a", "true"))
    with pytest.raises(vcflow.NothingToRun):
        vcflow.run(manifest, state_dir=tmp_path / "state")
    assert not (tmp_path / "state").exists()


def test_an_empty_input_is_nothing_to_run(tmp_path: Path) -> None:
    """README: `vcflow.NothingToRun` when there is neither a JobFlow nor a vcjob."""
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n---\n")
    for sources in (empty, []):
        with pytest.raises(vcflow.NothingToRun, match=r"^error: no objects passed to run$"):
            vcflow.run(sources, state_dir=tmp_path / "state")
    assert not (tmp_path / "state").exists()


def test_another_runner_holding_the_state_directory_is_an_error(tmp_path: Path) -> None:
    manifest = tmp_path / "flow.yaml"
    manifest.write_text(job_template("a", "true") + "---" + FLOW)
    state = tmp_path / "state"
    state.mkdir()
    with statedir.ControllerLock(state, statedir.CONTROLLER) as lock:
        assert lock.acquired
        with pytest.raises(vcflow.LockHeld, match="already runs them"):
            vcflow.run(manifest, state_dir=state)
    with SqliteStore.in_state_dir(state) as store:
        assert store.list(JobFlow) == []


def _yaml(text: str) -> dict[str, object]:
    import yaml

    loaded = yaml.safe_load(text)
    assert isinstance(loaded, dict)
    loaded.setdefault("metadata", {})["namespace"] = "default"
    return loaded


ARGUMENTS_FLOW = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  arguments: [{name: threshold}]
  flows: [{name: a}]
"""


def test_run_takes_the_flows_arguments(tmp_path: Path) -> None:
    manifest = tmp_path / "flow.yaml"
    out = tmp_path / "args"
    script = f"echo $VCFLOW_ARGS > {out}"
    manifest.write_text(job_template("a", script) + "---" + ARGUMENTS_FLOW)
    state = tmp_path / "state"
    with pytest.raises(vcflow.ArgumentError, match='did you mean "threshold"'):
        vcflow.run(manifest, state_dir=state, arguments={"treshold": "1"})
    with pytest.raises(vcflow.ValidationFailed, match="required argument"):
        vcflow.run(manifest, state_dir=state)
    assert not state.exists()
    result = vcflow.run(manifest, state_dir=state, arguments={"threshold": "0.9"})
    assert result.succeeded, result
    assert out.read_text() == '{"threshold":"0.9"}\n'
    given = JobFlow.from_dict(_yaml(ARGUMENTS_FLOW))
    objects = [JobTemplate.from_dict(_yaml(job_template("a", script))), given]
    again = vcflow.run(objects, state_dir=tmp_path / "other", arguments={"threshold": "0.8"})
    assert again.succeeded
    assert out.read_text() == '{"threshold":"0.8"}\n'
    assert given.spec is not None and given.spec.arguments is not None
    assert given.spec.arguments[0].value is None  # (the caller's object is left as it was)


def test_unknown_fields_are_refused_unless_validate_says_otherwise(tmp_path: Path) -> None:
    manifest = tmp_path / "flow.yaml"
    odd = FLOW.replace("    - name: a\n", "    - name: a\n      withItems: [1]\n")
    manifest.write_text(job_template("a", "true") + "---" + job_template("b", "true") + "---" + odd)
    state = tmp_path / "state"
    with pytest.raises(
        vcflow.ValidationFailed, match=re.escape('unknown field "spec.flows[0].withItems"')
    ):
        vcflow.run(manifest, state_dir=state)
    objects = [JobFlow.from_dict(_yaml(odd))]
    with pytest.raises(
        vcflow.ValidationFailed, match=re.escape("JobFlow default/f: spec.flows[0].withItems")
    ):
        vcflow.run(objects, state_dir=state)
    assert not state.exists()
    with pytest.raises(vcflow.VcflowError, match="validate='loose': must be one of"):
        vcflow.run(manifest, state_dir=state, validate="loose")
    assert vcflow.run(manifest, state_dir=state, validate="warn").succeeded
