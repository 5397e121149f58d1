"""What the machine does to an SQLite store file (`sqlite.SqliteStore`): a new file made
whole before it is linked into place, and what SQLite or the OS refuses — a read-only or
full file system, a file that is not a database, a damaged one — as a StoreError naming the
file, never SQLite's exception."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import sqlite3
from pathlib import Path

from vcflow.api.errors import StoreError


def create_whole(path: Path) -> None:
    """Make a missing store file whole — written aside, then linked into place (another
    process that wins the race keeps its own) — and refuse an empty one: SQLite would take
    0 bytes for a new database, and a store that lost its content must not pass for one."""
    try:
        size: int | None = path.stat().st_size
    except FileNotFoundError:
        size = None
    if size == 0:
        raise StoreError(
            f"{path}: the file is empty (0 bytes), which no vcflow store ever is: move it "
            "away to start a new store here, or put back the store it should be"
        )
    if size is not None:
        return
    aside = path.with_name(f".{path.name}.{secrets.token_hex(8)}.new")
    try:
        db = sqlite3.connect(aside, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")  # writes the header: the file is whole
        finally:
            db.close()
        # (a process that made it first keeps its own: that file is the store)
        with contextlib.suppress(FileExistsError):
            os.link(aside, path)
    finally:
        for leftover in (aside, Path(f"{aside}-wal"), Path(f"{aside}-shm")):
            leftover.unlink(missing_ok=True)


#: What the machine refuses, in words, by the errno of an OSError.
_ERRNOS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "input/output error",
}


def failure(path: Path, exc: BaseException) -> StoreError:
    """A StoreError naming `path` for what SQLite or the OS refused (see the module
    docstring); SQLite's own words when nothing more is known."""
    if isinstance(exc, OSError) and exc.errno in _ERRNOS:
        where = exc.filename if isinstance(exc.filename, str) else path
        return StoreError(f"{_ERRNOS[exc.errno]}: {where}")
    code = code_of(exc)
    text = str(exc)
    if code == sqlite3.SQLITE_FULL or "disk is full" in text:
        return StoreError(f"no space left on device: {path}")
    if code == sqlite3.SQLITE_IOERR and _full(path.parent):
        # (growing vcflow.db-shm or -wal on a full disk: SQLite says "disk I/O error", its
        # errno out of Python's reach; a full file system is what it then almost surely was)
        return StoreError(f"no space left on device: {path}")
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN) or "readonly" in text:
        if not _writable(path.parent):
            return StoreError(
                f"{path.parent}: the state directory is read-only: vcflow writes its store "
                f"even to read it (SQLite keeps {path.name}-wal and {path.name}-shm beside it)"
            )
    if code == sqlite3.SQLITE_NOTADB or "not a database" in text:
        return StoreError(f"{path}: not a vcflow store (the file is not an SQLite database)")
    if code == sqlite3.SQLITE_CORRUPT or "malformed" in text:
        return StoreError(damaged(path, text))
    return StoreError(f"{path}: {text}")


def damaged(path: Path, detail: str) -> str:
    """One line: SQLite's detail without its `*** in database main ***` header line."""
    words = [line.strip() for line in detail.splitlines() if line.strip()]
    detail = "; ".join(w for w in words if not w.startswith("***")) or detail.strip()
    return (
        f"{path}: the store is damaged (SQLite: {detail}): move it away, with its -wal and "
        "-shm files, to start a new store here, or put back a copy of it"
    )


#: SQLite's result codes for what the machine refuses (not a constraint, not a misuse).
MACHINE = frozenset(
    {
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_NOTADB,
        sqlite3.SQLITE_CORRUPT,
        sqlite3.SQLITE_PERM,
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
    }
)


def code_of(exc: BaseException) -> int | None:
    """The primary SQLite result code of an exception (None when it has none)."""
    extended = getattr(exc, "sqlite_errorcode", None)
    return extended & 0xFF if isinstance(extended, int) else None


#: free bytes under which a file system is taken for full: a few of SQLite's pages (a WAL
#: frame, a wal-index block of the -shm file)
FULL_BELOW = 64 * 1024


def _full(folder: Path) -> bool:
    """Whether the file system of `folder` has no room left for SQLite's next write (the
    blocks this process may use: root may use the reserved ones)."""
    try:
        found = os.statvfs(folder)
    except OSError:
        return False
    blocks = found.f_bfree if os.geteuid() == 0 else found.f_bavail
    return blocks * found.f_frsize < FULL_BELOW


def _writable(folder: Path) -> bool:
    """Can this process create files in `folder` (mode, and a read-only mount as root)?"""
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return False
    except OSError:
        return False
    return os.access(folder, os.W_OK)
