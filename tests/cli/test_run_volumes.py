"""Volumes under `vcflow run`, with real processes: emptyDir, hostPath, configMap and secret
volumes found at their `mountPath` (private mount namespaces: nothing appears on the host),
ConfigMap and Secret values in `env` and `envFrom`, a missing ConfigMap failing the pod with
the kubelet's reason, and — where namespaces are not usable — the documented fallback
(`$VCFLOW_VOLUME_<NAME>`, a warning at validate time)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from vcflow.podserver import isolation

from .conftest import RunOne
from .flows import config, jobflow, template

Vc = Callable[..., Result]


def pod_spec(volumes: str, inits: str = "[]") -> str:
    """The pod spec's lines of `volumes` and `initContainers` (JSON lists)."""
    return f"\n          volumes: {volumes}\n          initContainers: {inits}"


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output + result.stderr
    return result


def absent(*paths: str) -> list[str]:
    return [p for p in paths if not os.path.lexists(p)]


needs_namespaces = pytest.mark.skipif(
    not isolation.usable(), reason="this machine gives no private mount namespaces"
)


@needs_namespaces
def test_volumes_configmaps_and_secrets_are_found_where_the_pod_asks(
    run_one: RunOne, tmp_path: Path
) -> None:
    host_in, host_out = tmp_path / "input", tmp_path / "out"
    host_in.mkdir()
    (host_in / "raw.txt").write_text("1 2 3\n")
    where = ["/data", "/input", "/etc/settings", "/etc/token"]
    before = absent(*where)
    volumes = json.dumps(
        [
            {"name": "data", "emptyDir": {}},
            {"name": "in", "hostPath": {"path": str(host_in)}},
            {"name": "out", "hostPath": {"path": str(host_out), "type": "DirectoryOrCreate"}},
            {"name": "cfg", "configMap": {"name": "settings"}},
            {
                "name": "sec",
                "secret": {"secretName": "token", "items": [{"key": "token", "path": "tok"}]},
            },
        ]
    )
    prep = json.dumps(
        [
            {
                "name": "prep",
                "image": "busybox",
                "command": ["sh", "-c", "tr -d 2 < /input/raw.txt > /data/clean.txt"],
                "volumeMounts": [
                    {"name": "data", "mountPath": "/data"},
                    {"name": "in", "mountPath": "/input", "readOnly": True},
                ],
            }
        ]
    )
    script = (
        "set -u; { cat /data/clean.txt; cat /etc/settings/lr; echo; cat /etc/token/tok; echo;"
        ' echo "LR=$LR S_token=$S_token"; echo "dir=$VCFLOW_VOLUME_DATA";'
        " touch /input/x 2>/dev/null && echo writable || echo read-only; } > /out/result.txt"
    )
    extra = """
              env: [{name: LR, valueFrom: {configMapKeyRef: {name: settings, key: lr}}}]
              envFrom: [{prefix: S_, secretRef: {name: token}}]
              volumeMounts:
                - {name: data, mountPath: /data}
                - {name: in, mountPath: /input, readOnly: true}
                - {name: out, mountPath: /out}
                - {name: cfg, mountPath: /etc/settings}
                - {name: sec, mountPath: /etc/token}"""
    config_objects = config() + "---"
    spec = pod_spec(volumes, prep)
    ran = run_one(script, "--timeout", "30", name="v", before=config_objects, pod=spec, extra=extra)
    ok(ran.result)
    lines = (host_out / "result.txt").read_text().splitlines()
    data_dir = lines[4].removeprefix("dir=")
    assert lines == [
        "1  3",
        "0.1",
        "s3cret",
        "LR=0.1 S_token=s3cret",
        f"dir={data_dir}",
        "read-only",
    ]
    assert data_dir.endswith("/pods/default/f-v-t-0/volumes/data")
    assert absent(*where) == before  # the mount points were never made on the host


def test_a_missing_configmap_fails_the_pod_with_the_kubelets_reason(
    vc: Vc, run_one: RunOne
) -> None:
    extra = "\n              env: [{name: X, valueFrom: {configMapKeyRef: {name: nope, key: k}}}]"
    result = run_one("true", "--timeout", "30", name="m", pod=pod_spec("[]"), extra=extra).result
    assert result.exit_code == 1, result.output
    pod = json.loads(ok(vc("get", "pod", "f-m-t-0", "-o", "json")).stdout)
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert pod["status"]["reason"] == "CreateContainerConfigError"
    assert terminated["reason"] == "CreateContainerConfigError"
    assert terminated["message"] == 'configmap "nope" not found'


def test_without_namespaces_the_volume_is_named_in_an_env_var_and_validate_warns(
    vc: Vc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(isolation, "usable", lambda: False)
    volumes = json.dumps([{"name": "work-dir", "emptyDir": {}}])
    script = 'echo seen > "$VCFLOW_VOLUME_WORK_DIR/file"; pwd > "$VCFLOW_VOLUME_WORK_DIR/pwd"'
    extra = """
              workingDir: /workspace
              volumeMounts: [{name: work-dir, mountPath: /workspace}]"""
    manifest = tmp_path / "flow.yaml"
    body = template("w", script, pod=pod_spec(volumes), extra=extra)
    manifest.write_text(body + jobflow("f", "w"))
    checked = ok(vc("validate", "-f", manifest))
    assert "mountPath '/workspace' cannot be honoured on this machine" in checked.stderr
    assert "$VCFLOW_VOLUME_WORK_DIR" in checked.stderr
    ok(vc("run", "-f", manifest, "--no-live", "--timeout", "30"))
    volume = tmp_path / "state" / "pods" / "default" / "f-w-t-0" / "volumes" / "work-dir"
    assert (volume / "file").read_text() == "seen\n"
    assert (volume / "pwd").read_text() == f"{volume}\n"
    assert not os.path.exists("/workspace")
