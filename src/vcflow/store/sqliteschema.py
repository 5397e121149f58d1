"""The SQLite store's tables (`sqlite.SqliteStore`), the upgrades from earlier versions,
the statement that reads its counters and the check that they agree.

Tables: `objects` (kind, ns, name, uid, rv, labels, owners, data JSON), the indexes
`labels` (kind, key, value → object) and `owners` (owner uid → object), the watch log
`events` (rv, type, kind, ns, name, data; for an object of `wire.SHARED_BODY_MIN` bytes or
more, data is its status and `body` the hash of the rest, kept once in `bodies`) and `meta`
(the compaction mark). Each index is
one b-tree (an object's entries are removed by the keys its row holds), and the latest
resourceVersion is that of the newest event (never compacted; the mark, when every event
was), so a commit writes no counter page. The file's `user_version` is its schema version:
a newer one is refused, an older one upgraded at open.
"""

from __future__ import annotations

import json
import sqlite3

SCHEMA_VERSION = 3

# meta 'rv' (version 1's counter, written no more) stays as a floor of the latest rv
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (key, value) VALUES ('rv', 0), ('compacted', 0);
CREATE TABLE IF NOT EXISTS objects (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,
    uid TEXT NOT NULL, rv INTEGER NOT NULL,
    labels TEXT NOT NULL, owners TEXT NOT NULL, data TEXT NOT NULL,
    UNIQUE (kind, ns, name)
);
CREATE UNIQUE INDEX IF NOT EXISTS objects_uid ON objects (uid);
CREATE TABLE IF NOT EXISTS labels (
    kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, obj INTEGER NOT NULL,
    PRIMARY KEY (kind, key, value, obj)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS owners (
    owner TEXT NOT NULL, obj INTEGER NOT NULL, PRIMARY KEY (owner, obj)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    rv INTEGER PRIMARY KEY, type TEXT NOT NULL,
    kind TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL,
    body TEXT
);
CREATE TABLE IF NOT EXISTS bodies (hash TEXT PRIMARY KEY, data TEXT NOT NULL) WITHOUT ROWID;
"""

# version 2 → 3: a big object's events keep its status and refer to the rest (`bodies`),
# stored once (`wire.split_event`)
FROM_V2 = """
ALTER TABLE events ADD COLUMN body TEXT
"""

# version 1 → 2: each index one b-tree (v1 kept a second one by object), and the counter
# is no longer written (it stays as a floor: see COUNTERS)
FROM_V1 = """
CREATE TABLE labels_v2 (
    kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, obj INTEGER NOT NULL,
    PRIMARY KEY (kind, key, value, obj)
) WITHOUT ROWID;
INSERT OR IGNORE INTO labels_v2 (kind, key, value, obj) SELECT kind, key, value, obj FROM labels;
DROP TABLE labels;
ALTER TABLE labels_v2 RENAME TO labels;
DROP INDEX IF EXISTS owners_obj;
"""

# (latest resourceVersion, compaction mark)
COUNTERS = (
    "SELECT max(ifnull((SELECT max(rv) FROM events), 0), r.value, c.value), c.value "
    "FROM meta r, meta c WHERE r.key = 'rv' AND c.key = 'compacted'"
)


def foreign_tables(db: sqlite3.Connection) -> list[str]:
    """The tables that say a file is another program's SQLite database (vcflow must not
    change it, not even to WAL): a file of no vcflow schema version with tables vcflow
    does not make. Read before anything is written."""
    if db.execute("PRAGMA user_version").fetchone()[0] != 0:
        return []
    names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return sorted(n for n in names if n not in _TABLES and not n.startswith("sqlite_"))


#: the tables SCHEMA and the upgrades make
_TABLES = frozenset({"meta", "objects", "labels", "labels_v2", "owners", "events", "bodies"})


def problems(db: sqlite3.Connection) -> list[str]:
    """What SQLite's integrity check finds, and where the indexes or the resourceVersion
    counter disagree with the objects; empty when the file is consistent."""
    found = [r[0] for r in db.execute("PRAGMA integrity_check") if r[0] != "ok"]
    counter = db.execute(COUNTERS).fetchone()[0]
    top = db.execute("SELECT ifnull(max(rv), 0) FROM objects").fetchone()[0]
    if top > counter:
        found.append(f"resourceVersion counter {counter} is behind a stored rv {top}")
    return found + _index_problems(db)


def _index_problems(db: sqlite3.Connection) -> list[str]:
    labels: dict[int, set[tuple[str, str, str]]] = {}
    for kind, key, value, oid in db.execute("SELECT kind, key, value, obj FROM labels"):
        labels.setdefault(oid, set()).add((kind, key, value))
    owners: dict[int, set[str]] = {}
    for owner, oid in db.execute("SELECT owner, obj FROM owners"):
        owners.setdefault(oid, set()).add(owner)
    found = []
    for oid, kind, stored_labels, stored_owners in db.execute(
        "SELECT id, kind, labels, owners FROM objects"
    ).fetchall():
        expected = {(kind, k, v) for k, v in json.loads(stored_labels).items()}
        if labels.pop(oid, set()) != expected:
            found.append(f"labels index of object {oid} ({kind}) differs from its labels")
        if owners.pop(oid, set()) != set(json.loads(stored_owners)):
            found.append(f"owners index of object {oid} ({kind}) differs from its owners")
    found += [f"labels index holds entries of a missing object {oid}" for oid in labels]
    found += [f"owners index holds entries of a missing object {oid}" for oid in owners]
    return found
