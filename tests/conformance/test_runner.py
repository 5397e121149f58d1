"""The conformance runner itself: verdict lines, skip rules, malformed files, exit codes.
Cases are written to tmp_path; the CLI is driven through `main(argv)`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.conformance import (
    RUNNERS,
    Case,
    CaseError,
    Failed,
    Passed,
    Result,
    Skipped,
    load_case,
    run_file,
)
from vcflow.conformance.__main__ import main
from vcflow.conformance.cases import vcflow_steps
from vcflow.conformance.runtime_world import RuntimeWorld
from vcflow.runtime.executor import Executor
from vcflow.runtime.kubelet_bridge import FINALIZER


def flow(name: str, *entries: tuple[str, list[str]]) -> dict[str, Any]:
    flows = [
        {"name": n, "dependsOn": {"targets": deps}} if deps else {"name": n} for n, deps in entries
    ]
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name},
        "spec": {"jobRetainPolicy": "retain", "flows": flows},
    }


VALID = flow("ok", ("a", []), ("b", ["a"]))
CYCLE = flow("loop", ("a", ["b"]), ("b", ["a"]))


def admission(case_id: str, obj: dict[str, Any], **keys: Any) -> dict[str, Any]:
    return {"id": case_id, "kind": "admission", "objects": [obj], **keys}


def write(directory: Path, data: dict[str, Any]) -> Path:
    path = directory / f"{data['id']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    return code, capsys.readouterr().out.splitlines()


def test_wrong_expectation_is_fail_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, admission("wrong", VALID, expect={"admitted": False, "error_contains": "x"}))
    write(tmp_path, admission("right", VALID, expect={"admitted": True}))
    code, lines = run_cli(capsys, str(tmp_path))
    assert code == 1
    assert lines == [
        'FAIL wrong: expected rejection containing "x", got admitted',
        "1 passed, 1 failed, 0 skipped",
    ]


def test_wrong_message_shows_what_was_said(tmp_path: Path) -> None:
    expect = {"admitted": False, "error_contains": "vertex is not defined"}
    result = run_file(str(write(tmp_path, admission("msg", CYCLE, expect=expect)))).result
    assert isinstance(result, Failed)
    assert "got rejected: " in result.reason
    assert "jobflow Flow is not DAG" in result.reason


def test_unexpected_rejection_fails(tmp_path: Path) -> None:
    result = run_file(str(write(tmp_path, admission("rej", CYCLE, expect={"admitted": True}))))
    assert isinstance(result.result, Failed)
    assert result.result.reason.startswith("expected admission, got rejected: ")


def test_verbose_lists_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, admission("fine", VALID, expect={"admitted": True}))
    code, lines = run_cli(capsys, "-v", str(tmp_path))
    assert (code, lines) == (0, ["PASS fine", "1 passed, 0 failed, 0 skipped"])


@pytest.mark.parametrize("flag", ["volcano_bug", "design_divergence"])
def test_flagged_without_vcflow_expectation_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    write(tmp_path, admission("flagged", VALID, expect={"admitted": True}, **{flag: True}))
    code, lines = run_cli(capsys, str(tmp_path))
    assert (code, lines) == (
        0,
        ["SKIP flagged: no vcflow expectation", "0 passed, 0 failed, 1 skipped"],
    )


def test_flagged_following_volcano_is_judged_on_expect(tmp_path: Path) -> None:
    case = admission(
        "follows", VALID, expect={"admitted": True}, volcano_bug=True, vcflow_follows_volcano="§1"
    )
    assert run_file(str(write(tmp_path, case))).result == Passed()


def test_expect_vcflow_replaces_expect(tmp_path: Path) -> None:
    case = admission(
        "vc",
        CYCLE,
        expect={"admitted": True},
        expect_vcflow={"admitted": False, "error_contains": "not DAG"},
        volcano_bug=True,
    )
    assert run_file(str(write(tmp_path, case))).result == Passed()


def test_vcflow_skip_gives_its_reason(tmp_path: Path) -> None:
    case = admission("nope", VALID, expect={"admitted": False}, vcflow_skip="does not apply")
    assert run_file(str(write(tmp_path, case))).result == Skipped("does not apply")


def test_error_contains_any(tmp_path: Path) -> None:
    good = {"admitted": False, "error_contains_any": ["nothing like it", "not DAG"]}
    bad = {"admitted": False, "error_contains_any": ["nothing like it", "nor this"]}
    assert run_file(str(write(tmp_path, admission("any1", CYCLE, expect=good)))).result == Passed()
    result = run_file(str(write(tmp_path, admission("any2", CYCLE, expect=bad)))).result
    assert isinstance(result, Failed)
    assert 'any of ["nothing like it", "nor this"]' in result.reason


def test_schema_error_is_a_rejection(tmp_path: Path) -> None:
    bad = flow("bad", ("a", []))
    bad["spec"]["jobRetainPolicy"] = "keep"
    expect = {"admitted": False, "error_contains": "Unsupported value"}
    assert run_file(str(write(tmp_path, admission("schema", bad, expect=expect)))).result == (
        Passed()
    )


def test_subject_and_update(tmp_path: Path) -> None:
    case = {
        "id": "upd",
        "kind": "admission",
        "operation": "UPDATE",
        "objects": [CYCLE, VALID],
        "subject": 1,
        "old_object": flow("ok", ("a", [])),
        "expect": {"admitted": False, "error_contains": "spec updates are not supported"},
    }
    assert run_file(str(write(tmp_path, case))).result == Passed()


@pytest.mark.parametrize(
    ("keys", "reason"),
    [
        ({"operation": "UPDATE"}, "old_object (a map) is required for UPDATE"),
        ({"operation": "PATCH"}, "operation must be one of"),
        ({"subject": 3}, "subject must be an index into objects"),
        ({"expect": {"error_contains": "x"}}, "expect.admitted must be a boolean"),
        ({"expect": None}, "expect must be a map"),
        ({"objects": []}, "objects must be a non-empty list"),
        ({"objects": ["text"]}, "objects[0] must be a map"),
    ],
)
def test_malformed_admission_case_fails_with_reason(
    tmp_path: Path, keys: dict[str, Any], reason: str
) -> None:
    case = {**admission("mal", VALID, expect={"admitted": True}), **keys}
    result = run_file(str(write(tmp_path, case))).result
    assert isinstance(result, Failed)
    assert result.reason.startswith("malformed case: ")
    assert reason in result.reason


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("id: [unclosed\n", "invalid case file: line "),
        ("- a list\n", "expected a Kubernetes object (a mapping), got a list"),
        ("", "expected one YAML document (the case), found 0"),
        ("id: a\n---\nid: b\n", "found 2"),
        ("id: x\nid: x\n", "already defined"),
        ("id: other\nkind: admission\n", 'id "other" is not the file stem'),
        ("id: broken\nkind: story\n", "kind must be one of admission, controller, runtime"),
        ("id: broken\nkind: admission\nvolcano_bug: maybe\n", "volcano_bug must be a boolean"),
    ],
)
def test_unreadable_case_file_is_a_fail_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, reason: str
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    code, lines = run_cli(capsys, str(path))
    assert code == 1
    assert lines[0].startswith(f"FAIL {path}: invalid case file: ")
    assert reason in lines[0]
    assert lines[1:] == ["0 passed, 1 failed, 0 skipped"]


def test_not_utf8_is_a_fail_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bin.yaml").write_bytes(b"id: \xff\xfe\n")
    code, lines = run_cli(capsys, str(tmp_path))
    assert code == 1
    assert "not UTF-8" in lines[0]


def test_runner_crash_is_a_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(case: Case) -> Result:
        raise RuntimeError("kaput")

    monkeypatch.setitem(RUNNERS, "admission", boom)
    result = run_file(str(write(tmp_path, admission("crash", VALID, expect={"admitted": True}))))
    assert result.result == Failed("runner crashed: RuntimeError: kaput")


def runtime_case(case_id: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "r"},
        "spec": {
            "tasks": [
                {
                    "name": "w",
                    "replicas": 1,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m"}]}},
                }
            ]
        },
    }
    return {"id": case_id, "kind": "runtime", "job": job, "steps": steps}


def test_runtime_cases_run(tmp_path: Path) -> None:
    steps = [
        {"name": "created", "do": [], "expect": {"phase": "Pending", "pods": {"r-w-0": "Pending"}}},
        {
            "name": "done",
            "do": [{"pod_running": ["r-w-0"]}, {"pod_exit": {"pod": "r-w-0", "code": 0}}],
            "expect": {"phase": "Completed", "phases_seen": ["Running", "Completed"]},
        },
    ]
    assert run_file(str(write(tmp_path, runtime_case("k-runtime", steps)))).result == Passed(
        "2 steps"
    )


def test_runtime_cases_drive_the_real_runtime_shell() -> None:
    """The runtime harness is vcflow's runtime shell on a store, not a model of it: its pods
    are the store's, carrying the runtime's finalizer, and the vcjob status is the one the
    runtime wrote there."""
    world = RuntimeWorld()
    world.create_job(runtime_case("k-real", [])["job"])
    assert isinstance(world.executor, Executor)
    pod = world.store.get(Pod, "default", "r-w-0")
    assert pod.metadata.finalizers == [FINALIZER]
    world.pod_running("r-w-0")
    world.settle()
    world.pod_exit("r-w-0", 0)
    world.settle()
    assert world.store.get(VCJob, "default", "r").phase == "Completed"
    assert world.phases_seen == {"r": ["Pending", "Running", "Completed"]}


def test_runtime_case_failure_names_the_step(tmp_path: Path) -> None:
    steps = [{"name": "created", "do": [], "expect": {"phase": "Running"}}]
    result = run_file(str(write(tmp_path, runtime_case("k-rt-fail", steps)))).result
    assert result == Failed("step 1 \"created\": job r phase 'Pending' != expected 'Running'")


def test_impossible_runtime_action_fails_the_case(tmp_path: Path) -> None:
    steps = [{"name": "exit", "do": [{"pod_exit": {"pod": "r-w-9", "code": 0}}], "expect": {}}]
    result = run_file(str(write(tmp_path, runtime_case("k-rt-bad", steps)))).result
    assert result == Failed('step 1 "exit": no pod r-w-9')


def test_controller_case_failure_names_the_step(tmp_path: Path) -> None:
    flow = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "f"},
        "spec": {"flows": [{"name": "a"}]},
    }
    case = {
        "id": "k-controller",
        "kind": "controller",
        "steps": [{"name": "make it", "do": [{"create": flow}], "expect": {"vcjobs": ["f-a"]}}],
    }
    result = run_file(str(write(tmp_path, case))).result
    assert isinstance(result, Failed)
    assert 'step 1 "make it": vcjobs [] != expected' in result.reason


def test_duplicate_ids_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for sub in ("one", "two"):
        (tmp_path / sub).mkdir()
        write(tmp_path / sub, admission("same", VALID, expect={"admitted": True}))
    code, lines = run_cli(capsys, str(tmp_path))
    assert code == 1
    assert 'duplicate case id "same"' in lines[0]


def test_directories_are_searched_recursively(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "deep" / "er").mkdir(parents=True)
    write(tmp_path / "deep" / "er", admission("deep", VALID, expect={"admitted": True}))
    (tmp_path / "README.md").write_text("not a case", encoding="utf-8")
    assert run_cli(capsys, str(tmp_path)) == (0, ["1 passed, 0 failed, 0 skipped"])


def test_missing_paths_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def test_nonexistent_path_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nothing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_empty_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 2
    assert "no *.yaml case files" in capsys.readouterr().err


def test_steps_for_vcflow(tmp_path: Path) -> None:
    steps = [
        {"name": "one", "do": [], "expect": {"a": 1}, "expect_vcflow": {"a": 2}},
        {"name": "two", "do": [{"wait": 1}], "expect": {"b": 1}},
        {"name": "three", "do": [], "expect": {}, "vcflow_skip": "differs"},
    ]
    case = load_case(str(write(tmp_path, {"id": "st", "kind": "controller", "steps": steps})))
    picked = vcflow_steps(case)
    assert [(s.name, dict(s.expect)) for s in picked] == [("one", {"a": 2}), ("two", {"b": 1})]
    assert case.has_vcflow_expectation()


def test_vcflow_skip_only_on_trailing_steps(tmp_path: Path) -> None:
    steps = [
        {"name": "one", "do": [], "expect": {}, "vcflow_skip": "differs"},
        {"name": "two", "do": [], "expect": {}},
    ]
    case = load_case(str(write(tmp_path, {"id": "st2", "kind": "controller", "steps": steps})))
    with pytest.raises(CaseError, match="only trailing steps"):
        vcflow_steps(case)
