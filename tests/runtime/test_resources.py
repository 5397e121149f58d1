"""Host capacity and the `--capacity` override (Kubernetes quantities, one-line errors)."""

from __future__ import annotations

import os
from fractions import Fraction

import pytest

from vcflow.runtime.resources import (
    CapacityError,
    capacity,
    host_capacity,
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
    assert capacity(None) == host_capacity()


def test_show_capacity() -> None:
    assert show_capacity(parse_capacity("cpu=1500m,memory=2Gi,x.io/y=3")) == (
        "cpu=1500m,memory=2048Mi,x.io/y=3"
    )
