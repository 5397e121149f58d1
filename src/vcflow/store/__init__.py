"""Tier 3, I/O: the object store every shell meets through, as Kubernetes' controllers meet
through the API server.

`base.Store` is the protocol; `memory.MemoryStore` is the test fake, `sqlite.SqliteStore`
the embedded default (`<state dir>/vcflow.db`). `engine` holds the shared write semantics
(resourceVersions, generation, finalizers, garbage collection, apply), `admit` the
admission hook every write passes, `wire` the pure merge rules.
"""

from typing import TYPE_CHECKING

from vcflow.store.base import (
    ApplyResult,
    EventType,
    Expired,
    InvalidSelector,
    KindRegistry,
    Outcome,
    Selector,
    SelectorLike,
    Store,
    UnknownKind,
    WatchEvent,
    default_kinds,
)
from vcflow.store.memory import MemoryStore
from vcflow.store.sqlite import DB_FILE, SqliteStore

__all__ = [
    "DB_FILE",
    "ApplyResult",
    "EventType",
    "Expired",
    "InvalidSelector",
    "KindRegistry",
    "MemoryStore",
    "Outcome",
    "Selector",
    "SelectorLike",
    "SqliteStore",
    "Store",
    "UnknownKind",
    "WatchEvent",
    "default_kinds",
]

if TYPE_CHECKING:

    def _implements_store(memory: MemoryStore, sqlite: SqliteStore) -> tuple[Store, Store]:
        """mypy proves both backends satisfy the Store protocol."""
        return memory, sqlite
