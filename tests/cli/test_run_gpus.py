"""GPUs under `vcflow run`, with real processes: each pod that asks for `nvidia.com/gpu` sees
the devices it was given (`CUDA_VISIBLE_DEVICES`), two pods never share one, a job waits
while the GPUs are held, and a rerun after a SIGKILL'd run knows what the surviving pods
hold; a pod without a GPU sees none."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from vcflow.api.vcjob import VCJob
from vcflow.store import SqliteStore

from .flows import DEADLINE, spawn, stop_pods, template, wait_until

CAPACITY = ("--capacity", "nvidia.com/gpu=4")


def gpu_job(name: str, out: Path, gpus: int | None) -> str:
    """A vcjob whose container writes what it sees to `out/<name>`, then waits for the file
    `out/<name>.go`."""
    seen = f'echo "$CUDA_VISIBLE_DEVICES|$NVIDIA_VISIBLE_DEVICES" > {out}/{name}.tmp'
    wait = f"until [ -e {out}/{name}.go ]; do sleep 0.05; done"
    script = f"{seen}; mv {out}/{name}.tmp {out}/{name}; {wait}"
    limits = f"\n              resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}" if gpus else ""
    return template(name, script, kind="Job", plugins=False, image="cuda", extra=limits)


@pytest.fixture
def out(tmp_path: Path) -> Iterator[Path]:
    """Where the jobs write what they see; whatever still runs is stopped at the end."""
    path = tmp_path / "out"
    path.mkdir()
    yield path
    stop_pods(tmp_path / "state")


def seen(out: Path, name: str) -> tuple[str, str]:
    cuda, _, nvidia = (out / name).read_text().strip().partition("|")
    return cuda, nvidia


def devices(out: Path, name: str) -> set[str]:
    cuda, nvidia = seen(out, name)
    assert cuda == nvidia, (cuda, nvidia)
    return set(cuda.split(","))


def phase(state_dir: Path, job: str) -> str:
    with SqliteStore.in_state_dir(state_dir) as store:
        return store.get(VCJob, "default", job).phase


def test_two_jobs_get_different_gpus_and_a_third_waits_for_one_to_end(
    tmp_path: Path, out: Path
) -> None:
    manifest = tmp_path / "jobs.yaml"
    names = ("a", "b", "c")
    manifest.write_text("".join(gpu_job(n, out, 2) for n in names) + gpu_job("cpu", out, None))
    state_dir = tmp_path / "state"
    proc = spawn(state_dir, manifest, *CAPACITY)
    try:
        wait_until(lambda: sum((out / n).exists() for n in names) == 2, "two GPU jobs to start")
        first, second = (n for n in names if (out / n).exists())
        (third,) = set(names) - {first, second}
        held = devices(out, first) | devices(out, second)
        assert len(devices(out, first)) == len(devices(out, second)) == 2
        assert held == {"0", "1", "2", "3"}  # four distinct devices
        wait_until(lambda: (out / "cpu").exists(), "the CPU job to start")
        assert seen(out, "cpu") == ("", "void")  # no GPU asked for, none seen
        assert phase(state_dir, third) == "Pending"  # the gang waits for GPUs
        assert not (out / third).exists()
        freed = devices(out, first)
        (out / f"{first}.go").touch()
        wait_until(lambda: (out / third).exists(), "the third job to start")
        assert devices(out, third) == freed
        for name in (second, third, "cpu"):
            (out / f"{name}.go").touch()
        stdout, stderr = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stdout + stderr


def test_a_rerun_after_a_crash_gives_no_gpu_a_surviving_pod_holds(
    tmp_path: Path, out: Path
) -> None:
    first = tmp_path / "first.yaml"
    first.write_text(gpu_job("a", out, 2))
    state_dir = tmp_path / "state"
    proc = spawn(state_dir, first, *CAPACITY)
    try:
        wait_until(lambda: (out / "a").exists(), "job a to start")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=DEADLINE)
    # its pod runs on, unwatched; the rerun adopts it and starts b beside it
    both = tmp_path / "both.yaml"
    both.write_text(gpu_job("a", out, 2) + gpu_job("b", out, 2))
    rerun = spawn(state_dir, both, *CAPACITY)
    try:
        wait_until(lambda: (out / "b").exists(), "job b to start")
        assert devices(out, "a").isdisjoint(devices(out, "b"))
        assert devices(out, "a") | devices(out, "b") == {"0", "1", "2", "3"}
        (out / "a.go").touch()
        (out / "b.go").touch()
        stdout, stderr = rerun.communicate(timeout=DEADLINE)
    finally:
        if rerun.poll() is None:
            rerun.kill()
    assert rerun.returncode == 0, stdout + stderr
