"""Kubernetes resource quantities (`vcflow.api.quantity`): what parses, to what exact amount,
and why the rest is refused (the admission message names it)."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

from vcflow.api import quantity


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("2", 2),
        ("500m", Fraction(1, 2)),
        ("1.5Gi", Fraction(3, 2) * 2**30),
        ("1e3", 1000),
        ("1E", 10**18),
        ("1E-2", Fraction(1, 100)),
        (".5", Fraction(1, 2)),
        ("+1.", 1),
        ("-4", -4),  # a quantity; admission refuses it as a resource (>= 0)
        ("7Ei", 7 * 2**60),
        ("0.1n", Fraction(1, 10**9)),  # rounded up to a nano, as Kubernetes does
        ("1e-50", Fraction(1, 10**9)),
        ("0e999", 0),
        (3, 3),
        (1.5, Fraction(3, 2)),
    ],
)
def test_quantities_parse_to_exact_amounts(text: str | int | float, amount: Fraction) -> None:
    assert quantity.parse(text) == amount
    assert quantity.problem(text) is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("abc", quantity.SYNTAX),
        ("1Zi", quantity.SYNTAX),
        ("12abc", quantity.SYNTAX),
        (" 1", quantity.SYNTAX),
        ("", quantity.SYNTAX),
        (True, quantity.SYNTAX),
        ("1e309", quantity.TOO_LARGE),
        ("8Ei", quantity.TOO_LARGE),
        ("9223372036854775808", quantity.TOO_LARGE),
        (10**19, quantity.TOO_LARGE),
        (float("inf"), quantity.TOO_LARGE),
    ],
)
def test_what_kubernetes_refuses_is_not_a_quantity(value: object, problem: str) -> None:
    assert quantity.problem(value) == problem  # type: ignore[arg-type]
    assert quantity.parse(value) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["1" + "0" * 5000, "1e" + "9" * 5000, "0." + "0" * 5000 + "1"])
def test_long_numbers_are_judged_without_big_arithmetic(text: str) -> None:
    started = time.monotonic()
    quantity.problem(text)  # no int-str conversion error, no 10**huge
    assert time.monotonic() - started < 1.0
