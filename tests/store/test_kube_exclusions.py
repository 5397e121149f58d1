"""Every contract test left out on the kube backend (KUBE_CANNOT) exists: a renamed test
must not silently start being left out — or stop being listed."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.store.conftest import KUBE_CANNOT


def test_every_left_out_test_is_a_contract_test() -> None:
    here = Path(__file__).parent
    defined = {
        node.name
        for path in here.rglob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }
    assert set(KUBE_CANNOT) <= defined, sorted(set(KUBE_CANNOT) - defined)
