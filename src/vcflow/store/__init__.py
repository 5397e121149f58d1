"""Tier 3, I/O: the object store every shell meets through, as Kubernetes' controllers meet
through the API server.

`base.Store` is the protocol (`Reader`, `Writer`, `Feed`); the embedded stores
(`base.EmbeddedStore`: transactions too) are `memory.MemoryStore`, the test fake, and
`sqlite.SqliteStore`, the default (`<state dir>/vcflow.db`). `engine` holds the shared
write semantics (resourceVersions, generation, finalizers, garbage collection, apply),
`admit` the admission hook every write passes, `wire` the pure merge rules.
"""

from typing import TYPE_CHECKING

from vcflow.store.base import (
    ApplyResult,
    Cursor,
    EmbeddedStore,
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
    "Cursor",
    "EmbeddedStore",
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

    def _implements_store(
        memory: MemoryStore, sqlite: SqliteStore
    ) -> tuple[EmbeddedStore, EmbeddedStore]:
        """mypy proves both backends satisfy the EmbeddedStore protocol."""
        return memory, sqlite
