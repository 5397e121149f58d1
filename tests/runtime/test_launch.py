"""Resolving a pod into spec.json: `$(VAR)` expansion, env sources, defaults, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vcflow.runtime.launch import LaunchError, PodFile, build_spec, expand, prepare_pod_dir

from .conftest import pod, request, sh

DEFINED = {"A": "a", "EMPTY": ""}


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("$(A)", "a"),
        ("x$(A)y$(A)", "xaya"),
        ("$(NOPE)", "$(NOPE)"),
        ("$$(A)", "$(A)"),
        ("$$", "$"),
        ("$", "$"),
        ("a$", "a$"),
        ("$A", "$A"),
        ("$(A", "$(A"),
        ("$(EMPTY)|", "|"),
        ("$$$(A)", "$a"),
        ("($(A))", "(a)"),
    ],
)
def test_expand_like_kubernetes(text: str, out: str) -> None:
    assert expand(text, DEFINED) == out


def container(spec: dict[str, Any], index: int = 0, kind: str = "containers") -> dict[str, Any]:
    result: dict[str, Any] = spec[kind][index]
    return result


def test_env_sources_order_and_expansion(tmp_path: Path) -> None:
    env = [
        {"name": "A", "value": "one"},
        {"name": "B", "value": "$(A)-$(EXTRA)-$(LATER)"},
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "LBL", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['k']"}}},
        {"name": "ANN", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['a']"}}},
        {"name": "MISSING", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['no']"}}},
        {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "LATER", "value": "late"},
        {"name": "EXTRA", "value": "mine"},
    ]
    req = request(
        "p",
        pod(sh("c", "echo $(B) $(NOPE) $$(A)", env=env, args=["$(POD)"])),
        labels={"k": "lv"},
        annotations={"a": "av"},
        env={"EXTRA": "plugin", "VC_TASK_INDEX": "0"},
    )
    host = {"PATH": "/bin", "HOME": "/h", "OTHER": "x", "VCFLOW_STATE_DIR": "/s", "PWD": "/p"}
    spec = build_spec(req, tmp_path, base_env=host)
    c = container(spec)
    assert c["env"] == {
        "PATH": "/bin",
        "HOME": "/h",
        "OTHER": "x",
        "HOSTNAME": "p",
        "EXTRA": "mine",
        "VC_TASK_INDEX": "0",
        "A": "one",
        "B": "one-plugin-$(LATER)",
        "POD": "p",
        "NS": "ns",
        "LBL": "lv",
        "ANN": "av",
        "MISSING": "",
        "IP": "127.0.0.1",
        "LATER": "late",
    }
    assert c["argv"] == ["sh", "-c", "echo one-plugin-$(LATER) $(NOPE) $(A)", "p"]


def test_defaults(tmp_path: Path) -> None:
    spec = build_spec(request("p", {"containers": [{"name": "c", "image": "busybox"}]}), tmp_path)
    assert spec["restartPolicy"] == "Always"
    assert container(spec)["argv"] is None
    assert container(spec)["workingDir"] == str(tmp_path / "work")
    assert spec["activeDeadlineSeconds"] is None
    assert spec["terminationGracePeriodSeconds"] is None


def test_working_dir_defaults_to_the_applied_from_directory(tmp_path: Path) -> None:
    containers = (
        sh("a", "true"),
        sh("b", "true", workingDir="sub"),
        sh("c", "true", workingDir="/t"),
    )
    spec = build_spec(request("p", pod(*containers), working_dir="/project"), tmp_path)
    assert [container(spec, i)["workingDir"] for i in range(3)] == [
        "/project",
        "/project/sub",
        "/t",
    ]


def test_working_dir_relative_and_absolute(tmp_path: Path) -> None:
    containers = (sh("a", "true", workingDir="sub"), sh("b", "true", workingDir="/tmp"))
    spec = build_spec(request("p", pod(*containers)), tmp_path)
    assert container(spec, 0)["workingDir"] == str(tmp_path / "work" / "sub")
    assert container(spec, 1)["workingDir"] == "/tmp"


def test_hostname_and_grace(tmp_path: Path) -> None:
    spec = build_spec(
        request("p", pod(sh("c", "true"), hostname="h1", terminationGracePeriodSeconds=5)),
        tmp_path,
    )
    assert container(spec)["env"]["HOSTNAME"] == "h1"
    assert spec["terminationGracePeriodSeconds"] == 5


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"containers": []}, "has no containers"),
        (pod(sh("c", "true"), policy="Sometimes"), "unsupported restartPolicy 'Sometimes'"),
        (pod(sh("c", "true"), sh("c", "true")), "a duplicate container name 'c'"),
        (pod(sh("../x", "true")), "an invalid container name '../x'"),
        (
            pod(sh("c", "true", env=[{"name": "X", "valueFrom": {"configMapKeyRef": {}}}])),
            "env X: valueFrom configMapKeyRef is not supported locally",
        ),
        (
            pod(sh("c", "true", env=[{"name": "X", "valueFrom": {"secretKeyRef": {}}}])),
            "valueFrom secretKeyRef is not supported",
        ),
        (
            pod(
                sh(
                    "c",
                    "true",
                    env=[{"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.x"}}}],
                )
            ),
            "unsupported fieldRef.fieldPath 'spec.x'",
        ),
    ],
)
def test_launch_errors(tmp_path: Path, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(LaunchError) as caught:
        build_spec(request("p", spec), tmp_path)
    assert message in str(caught.value)
    assert str(caught.value).startswith("pod ns/p: ")


def test_files_are_written_inside_the_pod_dir(tmp_path: Path) -> None:
    req = request(
        "p",
        pod(sh("c", "true")),
        files={"etc/volcano/w.host": PodFile("p-w-0\n"), "ssh/id": PodFile(b"k", 0o600)},
    )
    prepare_pod_dir(tmp_path / "pod", req)
    assert (tmp_path / "pod/etc/volcano/w.host").read_text() == "p-w-0\n"
    assert (tmp_path / "pod/ssh/id").stat().st_mode & 0o777 == 0o600
    with pytest.raises(LaunchError, match="must be relative"):
        prepare_pod_dir(tmp_path / "pod", request("p", pod(), files={"../x": PodFile("")}))
    with pytest.raises(LaunchError, match="must be relative"):
        prepare_pod_dir(tmp_path / "pod", request("p", pod(), files={"/x": PodFile("")}))
