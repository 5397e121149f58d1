"""Kubernetes resource quantities (`500m`, `2`, `1.5Gi`, `129e6`): the one parser vcflow has,
for admission (which refuses what Kubernetes refuses), gang fitting and `--capacity`.

Syntax as `resource.ParseQuantity`: an optional sign, a decimal number, then a binary suffix
(`Ki` … `Ei`), a decimal one (`n u m "" k M G T P E`) or a decimal exponent (`e3`, `E-2`).
Amounts are exact `Fraction`s, rounded up to a nano (as Kubernetes rounds); a quantity may
not be larger than 2^63-1 in magnitude (Kubernetes' documented bound, so `1e309` is refused).
JSON numbers are quantities too (Kubernetes' `Quantity` unmarshals them). Pure.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

Quantity = str | int | float

#: The largest magnitude of a quantity (Kubernetes: "no quantity may represent a number
#: greater than 2^63-1 in magnitude").
MAX = 2**63 - 1
SYNTAX = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
TOO_LARGE = f"quantities may not be larger than 2^63-1 ({MAX}) in magnitude"

_FORM = re.compile(r"([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?")
_NANO = Fraction(1, 10**9)
_SCALE = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    **{
        s: Fraction(2 ** (10 * (i + 1))) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))
    },
}
#: Digits before the point past which a number is too large whatever its suffix says
#: (checked before any arithmetic: `1` followed by 5,000 zeros is refused at once).
_MAX_DIGITS = 40


def parse(value: Quantity | None) -> Fraction | None:
    """The amount of a quantity, or None when it is not one (or absent)."""
    amount, _ = _parse(value)
    return amount


def problem(value: Quantity) -> str | None:
    """Why `value` is not a quantity Kubernetes accepts (`SYNTAX`, `TOO_LARGE`); None if it is."""
    return _parse(value)[1]


def _parse(value: Quantity | None) -> tuple[Fraction | None, str | None]:
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None, SYNTAX
    if isinstance(value, float):
        if not math.isfinite(value):
            return None, TOO_LARGE
        return _bounded(Fraction(value))
    if isinstance(value, int):
        return _bounded(Fraction(value))
    return _parse_text(value)


@functools.lru_cache(maxsize=1024)
def _parse_text(value: str) -> tuple[Fraction | None, str | None]:
    """A quantity's text (cached: a flow's pods repeat the same few)."""
    match = _FORM.fullmatch(value)
    if match is None:
        return None, SYNTAX
    sign, number, suffix = match.group(1), match.group(2), match.group(3) or ""
    whole, _, fraction = number.partition(".")
    whole = whole.lstrip("0")
    exponent = _exponent(suffix)
    if not (whole or fraction.strip("0")):
        return Fraction(0), None
    if len(whole) + max(exponent, 0) > _MAX_DIGITS:
        return None, TOO_LARGE
    if exponent < -_MAX_DIGITS:
        return _bounded(_NANO)  # a tiny amount rounds up to the smallest one
    scale = Fraction(10) ** exponent if exponent else _SCALE[suffix]
    amount = Fraction(f"{whole or 0}.{fraction[:_MAX_DIGITS] or 0}")
    if fraction[_MAX_DIGITS:].strip("0"):
        amount += Fraction(1, 10 ** (_MAX_DIGITS + 1))  # (what was cut still rounds up)
    amount *= scale
    return _bounded(-amount if sign == "-" else amount)


def _exponent(suffix: str) -> int:
    """The decimal exponent of a suffix (0 for the others); a long one is clipped, as the
    amount is too large or rounds up to a nano all the same."""
    if suffix in _SCALE:
        return 0
    digits = suffix[1:].lstrip("+-").lstrip("0")
    sign = -1 if suffix[1:2] == "-" else 1
    return sign * (int(digits) if len(digits) <= 6 else 10**6)


def _bounded(amount: Fraction) -> tuple[Fraction | None, str | None]:
    if abs(amount) > MAX:
        return None, TOO_LARGE
    if amount.denominator != 1 and (amount / _NANO).denominator != 1:
        nanos = math.ceil(abs(amount) / _NANO)  # Kubernetes rounds up, away from zero
        amount = nanos * _NANO if amount > 0 else -nanos * _NANO
    return amount, None
