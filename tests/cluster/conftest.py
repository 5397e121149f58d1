"""The smoke tests' `namespace`: a fresh namespace of the session's cluster per test."""

from __future__ import annotations

import pytest


@pytest.fixture
def namespace(kube_namespace: str) -> str:
    return kube_namespace
