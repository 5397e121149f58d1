"""A state directory the machine refuses — read-only, on a full disk — or a store file that
is not one (0 bytes, not SQLite, damaged): one line naming the path, exit 1, no traceback, nothing
written. The full disk is a small tmpfs, mounted as root (as in CI); elsewhere that test is
skipped, saying why."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from vcflow.cli.app import app

from .flows import template


def padded(name: str, pad: str) -> str:
    """JobTemplate `name` with an annotation of `pad` (to fill a store)."""
    meta = f', annotations: {{pad: "{pad}"}}'
    return template(name, container="c", image="", command='["true"]', meta=meta)


Run = Callable[..., Result]


def run(state: Path, *args: str | Path) -> Result:
    return CliRunner().invoke(app, ["--state-dir", str(state), *(str(a) for a in args)])


def one_line(result: Result) -> str:
    assert result.exit_code == 1, result.output + result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(padded("t", "x"))
    return path


def test_an_empty_store_file_is_refused_not_taken_for_an_empty_store(
    tmp_path: Path, manifest: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "vcflow.db").write_bytes(b"")
    for args in (("get", "jt"), ("apply", "-f", manifest)):
        line = one_line(run(state, *args))
        assert line.startswith(f"{state / 'vcflow.db'}: the file is empty (0 bytes)")
    assert (state / "vcflow.db").stat().st_size == 0  # nothing written


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "vcflow.db").write_text("not sqlite at all, but long enough to have a header\n" * 9)
    line = one_line(run(state, "get", "jt"))
    assert line == f"{state / 'vcflow.db'}: not a vcflow store (the file is not an SQLite database)"


def test_a_new_store_is_never_left_empty(tmp_path: Path, manifest: Path) -> None:
    state = tmp_path / "state"
    assert run(state, "apply", "-f", manifest).exit_code == 0
    assert (state / "vcflow.db").stat().st_size > 0
    assert [p.name for p in state.iterdir() if p.name.endswith(".new")] == []


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """`tmpfs("size=64k")` mounts a tmpfs under tmp_path (root only; skips otherwise)."""
    mounted: list[Path] = []

    def mount(options: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
        point = tmp_path / f"mnt{len(mounted)}"
        point.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(point)
        return point

    yield mount
    for point in reversed(mounted):
        subprocess.run(["umount", "-l", str(point)], check=False)


def test_a_read_only_state_directory(
    tmp_path: Path, manifest: Path, tmpfs: Callable[[str], Path]
) -> None:
    state = tmp_path / "state"
    assert run(state, "apply", "-f", manifest).exit_code == 0
    if os.geteuid() == 0:  # root writes through modes: a read-only mount is read-only
        point = tmpfs("size=4m")
        subprocess.run(["cp", "-a", str(state), str(point)], check=True)
        subprocess.run(["mount", "-o", "remount,ro", str(point)], check=True)
        state = point / "state"
    else:
        state.chmod(0o555)
    try:
        for args in (("get", "jt"), ("describe", "jt", "t"), ("apply", "-f", manifest)):
            line = one_line(run(state, *args))
            assert line.startswith(f"{state}: the state directory is read-only"), line
    finally:
        if os.geteuid() != 0:
            state.chmod(0o755)


def test_a_full_disk(tmp_path: Path, tmpfs: Callable[[str], Path]) -> None:
    point = tmpfs("size=256k")
    state = point / "state"
    big = tmp_path / "big.yaml"
    big.write_text("".join(padded(f"t{i}", "x" * 4000) for i in range(100)))
    line = one_line(run(state, "apply", "-f", big))
    assert line == f"no space left on device: {state / 'vcflow.db'}"
    result = run(state, "get", "jt")  # nothing half-applied
    assert result.exit_code == 0 and "t0" not in result.stdout


def test_a_damaged_store_is_refused_at_open(tmp_path: Path) -> None:
    state = tmp_path / "state"
    many = tmp_path / "many.yaml"
    many.write_text("".join(padded(f"t{i}", "x" * 2000) for i in range(20)))
    assert run(state, "apply", "-f", many).exit_code == 0
    db = state / "vcflow.db"
    with sqlite3.connect(db) as found:
        (root,) = found.execute("SELECT rootpage FROM sqlite_master WHERE name = 'objects'")
        page_size = found.execute("PRAGMA page_size").fetchone()[0]
    with db.open("r+b") as file:  # the objects table's root page: its header overwritten
        file.seek((root[0] - 1) * page_size)
        file.write(b"\x07\x00\x99" * 20)
    flow = tmp_path / "flow.yaml"
    flow.write_text(
        "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\n"
        "spec: {flows: [{name: t0}]}\n"
    )
    for args in (("get", "jt"), ("apply", "-f", many), ("run", "-f", flow)):
        line = one_line(run(state, *args))
        assert line.startswith(f"{db}: the store is damaged (SQLite: "), line
        assert line.endswith("to start a new store here, or put back a copy of it"), line


def test_a_full_disk_under_an_existing_store(
    tmp_path: Path, manifest: Path, tmpfs: Callable[[str], Path]
) -> None:
    point = tmpfs("size=512k")
    state = point / "state"
    assert run(state, "apply", "-f", manifest).exit_code == 0
    filler = point / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:  # (SQLite then cannot even grow vcflow.db-shm: it said "disk I/O error")
        with contextlib.suppress(OSError):
            while os.write(fd, b"\0" * 4096):
                pass
    finally:
        os.close(fd)
    more = tmp_path / "more.yaml"
    more.write_text(padded("u", "x"))
    for args in (("get", "jt"), ("apply", "-f", more)):
        line = one_line(run(state, *args))
        assert line == f"no space left on device: {state / 'vcflow.db'}"
    filler.unlink()
    assert run(state, "apply", "-f", more).exit_code == 0
    assert "u" in run(state, "get", "jt", "-o", "name").stdout


def test_an_empty_state_dir_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--state-dir "$UNSET"`: Path("") is ".", so the working directory became the state
    directory (vcflow.db and controller.lock among the user's files, pods too)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(template("t"))
    result = CliRunner().invoke(app, ["--state-dir", "", "apply", "-f", "t.yaml"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--state-dir' (env var: 'VCFLOW_STATE_DIR'): "
        'an empty path names no directory (the default is ".vcflow")'
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.yaml"]  # nothing written


@pytest.mark.parametrize(
    ("stored", "error"),
    [
        (
            lambda data: json.dumps({**data, "spec": {**data["spec"], "tasks": "x"}}),
            'stored JobTemplate default/t cannot be read: spec.tasks: Invalid value: "x": '
            "must be of type array (the store was changed by another program or vcflow version)",
        ),
        (
            lambda data: "{not json",
            "a stored JobTemplate is not a JSON object: the store is damaged",
        ),
    ],
    ids=["bad-field", "not-json"],
)
def test_a_stored_object_this_vcflow_cannot_read_is_one_line(
    tmp_path: Path, manifest: Path, stored: Callable[[Any], str], error: str
) -> None:
    """A row edited by hand or written by another vcflow: every verb reading it said
    `internal error: ValidationError: 1 validation error for JobTemplate ...`."""
    state = tmp_path / "state"
    assert run(state, "apply", "-f", manifest).exit_code == 0
    with contextlib.closing(sqlite3.connect(state / "vcflow.db")) as db, db:
        (data,) = db.execute("SELECT data FROM objects WHERE name = 't'").fetchone()
        db.execute("UPDATE objects SET data = ? WHERE name = 't'", (stored(json.loads(data)),))
    for args in (("get", "jt"), ("describe", "jt", "t"), ("delete", "jt", "t")):
        assert one_line(run(state, *args)) == error


def test_a_device_as_state_dir_is_not_to_be_removed(manifest: Path) -> None:
    """`--state-dir /dev/null` said `...; remove it`: advice no one should follow."""
    line = one_line(run(Path("/dev/null"), "apply", "-f", manifest))
    assert line == "bad file at /dev/null: a special file, not a directory; give another path"
