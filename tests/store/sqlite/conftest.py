"""SQLite-only tests: a store on a file of its own (`path`), in place of the parametrized
`store` of the parent conftest; and `Boom`, the failure they inject into writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from vcflow.api.clock import FakeClock
from vcflow.store import DB_FILE, SqliteStore


class Boom(Exception):
    pass


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "state" / DB_FILE


@pytest.fixture
def store(path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(path, clock=FakeClock()) as opened:
        yield opened
