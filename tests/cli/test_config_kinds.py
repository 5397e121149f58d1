"""ConfigMaps and Secrets are kinds the CLI applies, lists, describes and deletes with
kubectl's words; a Secret's `stringData` is stored encoded in `data`; bad input is one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from .flows import config

Vc = Callable[..., Result]

OBJECTS = config("data: {user: YWRh}\n")


def test_apply_get_describe_delete(vc: Vc, tmp_path: Path) -> None:
    manifest = tmp_path / "config.yaml"
    manifest.write_text(OBJECTS)
    applied = vc("apply", "-f", manifest)
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines() == ["configmap/settings created", "secret/token created"]
    assert vc("apply", "-f", manifest).stdout.splitlines() == [
        "configmap/settings unchanged",
        "secret/token unchanged",
    ]
    assert vc("get", "cm").stdout.split()[:4] == ["NAME", "DATA", "AGE", "settings"]
    assert vc("get", "secrets").stdout.split()[:6] == [
        "NAME",
        "TYPE",
        "DATA",
        "AGE",
        "token",
        "Opaque",
    ]
    secret = json.loads(vc("get", "secret", "token", "-o", "json").stdout)
    assert secret["data"] == {"user": "YWRh", "token": "czNjcmV0"}  # base64 of s3cret
    assert "stringData" not in secret and secret["type"] == "Opaque"
    described = vc("describe", "secret", "token").stdout
    assert "token:  6 bytes" in described and "s3cret" not in described
    assert "lr:\n----\n0.1" in vc("describe", "configmap", "settings").stdout
    assert vc("delete", "configmap", "settings").stdout.strip() == 'configmap "settings" deleted'
    missing = vc("get", "cm", "settings")
    assert missing.exit_code == 1
    assert 'configmaps "settings" not found' in missing.stderr


def test_bad_base64_and_keys_are_rejected_naming_the_field(vc: Vc, tmp_path: Path) -> None:
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {'bad key': '!!!'}\n"
    )
    result = vc("validate", "-f", manifest)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert any("Secret default/s: data[bad key]: illegal base64 data" in line for line in lines)
    assert any('data[bad key]: Invalid value: "bad key"' in line for line in lines)
