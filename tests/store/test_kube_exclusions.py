"""Every contract test left out on the kube, kmock or cluster backend (KUBE_CANNOT,
KMOCK_CANNOT, CLUSTER_CANNOT) exists: a renamed test must not silently start being left
out — or stop being listed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from tests.store import cluster_cannot, kmock_cannot
from tests.store.conftest import CANNOT, KUBE_CANNOT


@pytest.mark.parametrize("table", sorted(CANNOT))
def test_every_left_out_test_is_a_contract_test(table: str) -> None:
    here = Path(__file__).parent
    defined = {
        node.name
        for path in here.rglob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }
    left_out = set(CANNOT[table])
    assert left_out <= defined, sorted(left_out - defined)
    assert all(CANNOT[table].values())  # each with its reason


@pytest.mark.parametrize("own", [kmock_cannot.KMOCK_CANNOT, cluster_cannot.CLUSTER_CANNOT])
def test_a_test_left_out_on_kube_keeps_the_kubernetes_apis_reason(own: dict[str, str]) -> None:
    """The emulator's and the real cluster's own tables name no test KUBE_CANNOT names:
    one reason each, the first that holds."""
    assert not set(own) & set(KUBE_CANNOT)
