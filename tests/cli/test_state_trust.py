"""The state directory as a trust boundary, from the commands (issue 16): it is made owner-only;
one another user owns, or a lock that is a link, is refused in one line before anything is
written; `vcflow logs` reads only the pod's own log files — no name or namespace leads out
of the state directory, and no log is read through a link."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import EXAMPLE, RunOne, Vc

NOBODY = 65534


def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret"
    path.write_text("do not print me\n")
    return path


def test_the_state_directory_is_owner_only(vc: Vc, state_dir: Path) -> None:
    assert vc("apply", "-f", EXAMPLE).exit_code == 0
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o700
    for name in ("vcflow.db", "controller.lock"):
        assert stat.S_IMODE((state_dir / name).stat().st_mode) == 0o600, name


def test_a_linked_controller_lock_is_refused_and_its_target_kept(
    vc: Vc, state_dir: Path, tmp_path: Path
) -> None:
    target = secret(tmp_path)
    state_dir.mkdir()
    (state_dir / "controller.lock").symlink_to(target)
    result = vc("apply", "-f", EXAMPLE)
    assert result.exit_code == 1
    lock = state_dir / "controller.lock"
    assert result.stderr == (
        f"bad file at {lock}: a symbolic link, not a regular file; remove it\n"
    )
    assert target.read_text() == "do not print me\n"
    assert not (state_dir / "vcflow.db").exists()  # refused before anything was written


@pytest.fixture
def foreign_state() -> Iterator[Path]:
    """A state directory uid 65534 made (in a directory both users can write)."""
    if os.geteuid() != 0:
        pytest.skip("acting as a second uid needs root")
    shared = Path(tempfile.mkdtemp(prefix="vcflow-foreign-"))
    shared.chmod(0o1777)
    state = shared / "state"
    subprocess.run(["mkdir", str(state)], user=NOBODY, group=NOBODY, extra_groups=[], check=True)
    yield state
    shutil.rmtree(shared, ignore_errors=True)


def test_a_state_directory_another_user_owns_is_refused(vc: Vc, foreign_state: Path) -> None:
    result = vc("--state-dir", foreign_state, "apply", "-f", EXAMPLE)
    assert result.exit_code == 1
    assert result.stderr == (
        f"bad owner of {foreign_state}: uid {NOBODY} owns it, not you (uid 0); remove it, "
        "or run vcflow as its owner\n"
    )
    assert list(foreign_state.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "planted", "what"),
    [
        (["-n", "../../outside", "fake"], "outside/fake/1", "namespace '../../outside'"),
        (["--namespace", "..", "fake"], "state/fake/1", "namespace '..'"),
        ([".."], "state/logs/1", "pod name '..'"),
    ],
)
def test_logs_names_never_lead_out_of_the_state_directory(
    vc: Vc, state_dir: Path, tmp_path: Path, args: list[str], planted: str, what: str
) -> None:
    """A namespace or pod name becomes a path (`logs/<ns>/<pod>/<attempt>/`): one Kubernetes
    would not take is refused, so a log planted where it leads is not read."""
    assert vc("apply", "-f", EXAMPLE).exit_code == 0
    (state_dir / "logs" / "default").mkdir(parents=True)  # (so that `..` resolves)
    attempt = tmp_path / planted
    attempt.mkdir(parents=True)
    (attempt / "attempt.json").write_text('{"containers": ["c"], "defaultContainer": "c"}')
    (attempt / "c.0.log").write_text("do not print me\n")
    result = vc("logs", *args)
    assert result.exit_code == 1
    assert "do not print me" not in result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"invalid {what}: ")


def test_a_linked_log_is_not_read(vc: Vc, state_dir: Path, tmp_path: Path, run_one: RunOne) -> None:
    assert run_one("echo hello", "--timeout", "60").result.exit_code == 0
    log = state_dir / "pods" / "default" / "f-a-t-0" / "main.0.log"
    log.unlink()
    log.symlink_to(secret(tmp_path))
    result = vc("logs", "f-a-t-0")
    assert result.exit_code == 1
    assert "do not print me" not in result.output
    assert result.stderr == f"{log} is a symbolic link, not a log: it is not read\n"


def test_a_linked_pod_directory_is_not_read(
    vc: Vc, state_dir: Path, tmp_path: Path, run_one: RunOne
) -> None:
    assert run_one("echo hello", "--timeout", "60").result.exit_code == 0
    pod_dir = state_dir / "pods" / "default" / "f-a-t-0"
    outside = tmp_path / "outside"
    shutil.move(pod_dir, outside)
    (outside / "main.0.log").write_text("do not print me\n")
    pod_dir.symlink_to(outside)
    result = vc("logs", "f-a-t-0")
    assert result.exit_code == 1
    assert "do not print me" not in result.output
    assert result.stderr == (
        f"the log is not read: bad file at {pod_dir}: a symbolic link, not a directory; remove it\n"
    )
