"""Host capacity and the `--capacity` override (Kubernetes quantities, one-line errors)."""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import pytest

from vcflow.runtime.resources import (
    CapacityError,
    capacity,
    detect_gpus,
    host_capacity,
    machine,
    parse_capacity,
    show_capacity,
)

GI = 2**30


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cpu=8", {"cpu": Fraction(8)}),
        ("cpu=500m", {"cpu": Fraction(1, 2)}),
        ("cpu=1.5", {"cpu": Fraction(3, 2)}),
        ("memory=1Gi", {"memory": Fraction(GI)}),
        ("memory=1G", {"memory": Fraction(10**9)}),
        ("memory=128974848", {"memory": Fraction(128974848)}),
        ("memory=129e6", {"memory": Fraction(129 * 10**6)}),
        ("memory=123Mi", {"memory": Fraction(123 * 2**20)}),
        (
            "cpu=8,memory=16Gi,nvidia.com/gpu=2",
            {"cpu": Fraction(8), "memory": Fraction(16 * GI), "nvidia.com/gpu": Fraction(2)},
        ),
        (" cpu = 2 , pods=110 ", {"cpu": Fraction(2), "pods": Fraction(110)}),
        ("nvidia.com/gpu=0", {"nvidia.com/gpu": Fraction(0)}),
        (
            "hugepages-2Mi=1Gi,ephemeral-storage=10Gi",
            {"hugepages-2Mi": Fraction(GI), "ephemeral-storage": Fraction(10 * GI)},
        ),
        ("amd.com/gpu=1", {"amd.com/gpu": Fraction(1)}),
    ],
)
def test_parse_capacity(text: str, expected: dict[str, Fraction]) -> None:
    assert parse_capacity(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cpu", "expected resource=quantity"),
        ("cpu=", "'' is not a quantity"),
        ("cpu=abc", "'abc' is not a quantity"),
        ("memory=1Gb", "'1Gb' is not a quantity"),
        ("cpu=-1", "must not be negative"),
        ("cpu=1,,memory=1Gi", "empty entry"),
        ("cpu=1,cpu=2", "cpu is given twice"),
        ("=4", "bad resource name ''"),
        ("Bad Name=1", "bad resource name 'Bad Name'"),
        ("", "empty entry"),
        ("nvidia.com/gpu=1.5", "GPUs are whole devices"),
        ("nvidia.com/gpu=500m", "GPUs are whole devices"),
        # an unprefixed name that is not Kubernetes' own matches no pod's request
        ("gpu=1", "unknown resource 'gpu'; did you mean 'nvidia.com/gpu'?"),
        ("cpu=2,GPUs=1", "unknown resource 'GPUs'; did you mean 'nvidia.com/gpu'?"),
        ("cores=4", "unknown resource 'cores'; expected cpu, memory"),
    ],
)
def test_parse_capacity_errors_are_one_line(text: str, message: str) -> None:
    with pytest.raises(CapacityError) as caught:
        parse_capacity(text)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_host_capacity_is_sane() -> None:
    host = host_capacity()
    assert set(host) == {"cpu", "memory"}
    assert 0 < host["cpu"] <= (os.cpu_count() or 1)
    assert 64 * 2**20 <= host["memory"] <= 2**50


def test_override_replaces_and_adds() -> None:
    merged = capacity("cpu=3,nvidia.com/gpu=1")
    assert merged["cpu"] == 3
    assert merged["nvidia.com/gpu"] == 1
    assert merged["memory"] == host_capacity()["memory"]
    assert machine(None, detect=lambda: ()).capacity == host_capacity()


SMI_OUTPUT = """\
GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-0b7c0000-0000-0000-0000-000000000000)
GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-0b7c0000-0000-0000-0000-000000000001)
  MIG 1g.5gb      Device  0: (UUID: MIG-00000000-0000-0000-0000-000000000000)
GPU 2: NVIDIA A100-SXM4-40GB (UUID: GPU-0b7c0000-0000-0000-0000-000000000002)
"""


def fake_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """An `nvidia-smi` first on PATH, running `script`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "nvidia-smi"
    exe.write_text(f"#!/bin/sh\n{script}\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")


def test_the_gpus_are_those_nvidia_smi_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = tmp_path / "listing"
    listing.write_text(SMI_OUTPUT)
    fake_smi(tmp_path, monkeypatch, f'[ "$1" = -L ] && cat {listing}')
    assert detect_gpus() == ("0", "1", "2")
    found = machine(None)
    assert found.gpus == ("0", "1", "2")
    assert found.capacity["nvidia.com/gpu"] == 3
    assert found.capacity["cpu"] == host_capacity()["cpu"]


@pytest.mark.parametrize(
    "script", ["exit 9", "echo 'NVIDIA-SMI has failed'; exit 0", "sleep 5"], ids=str
)
def test_an_nvidia_smi_that_fails_or_hangs_means_no_gpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    fake_smi(tmp_path, monkeypatch, script)
    assert detect_gpus(timeout=0.5) == ()


def test_without_nvidia_smi_there_are_no_gpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert detect_gpus() == ()
    assert "nvidia.com/gpu" not in machine(None).capacity


@pytest.mark.parametrize(
    ("found", "override", "gpus", "count"),
    [
        ((), "nvidia.com/gpu=4", ("0", "1", "2", "3"), 4),  # declared: indices 0..N-1
        (("0", "1", "2"), None, ("0", "1", "2"), 3),
        (("0", "1", "2"), "nvidia.com/gpu=2", ("0", "1"), 2),  # fewer: the first ones
        (("0", "1", "2"), "nvidia.com/gpu=0", (), 0),
        (("0",), "nvidia.com/gpu=2", ("0", "1"), 2),
        (("0", "1"), "cpu=2", ("0", "1"), 2),
    ],
)
def test_the_override_decides_how_many_gpus_are_handed_out(
    found: tuple[str, ...], override: str | None, gpus: tuple[str, ...], count: int
) -> None:
    got = machine(override, detect=lambda: found)
    assert got.gpus == gpus
    assert got.capacity.get("nvidia.com/gpu", 0) == count


def test_show_capacity() -> None:
    assert show_capacity(parse_capacity("cpu=1500m,memory=2Gi,x.io/y=3")) == (
        "cpu=1500m,memory=2048Mi,x.io/y=3"
    )
