"""The public surface: `vcflow.__all__` is sorted and every name in it exists (httpx habit)."""

from __future__ import annotations

import vcflow


def test_all_is_sorted_and_unique() -> None:
    assert list(vcflow.__all__) == sorted(set(vcflow.__all__))


def test_every_exported_name_exists() -> None:
    missing = [name for name in vcflow.__all__ if not hasattr(vcflow, name)]
    assert missing == []


def test_version_is_exported() -> None:
    assert "__version__" in vcflow.__all__
    assert isinstance(vcflow.__version__, str) and vcflow.__version__
