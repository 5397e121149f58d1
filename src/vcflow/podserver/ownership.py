"""Owner-only paths in the state directory, and the checks that refuse one another user owns
or can write, or a link where a file or directory belongs (ssh's rule for `~/.ssh`).
Standard library only: the pod server imports it. Used by `statedir` (the state directory,
controller.lock), `pods` (pods/, runtime/, events.fifo, start.lock, pod directories),
`podserver` (server.fifo, server.lock, the pod directories it is asked to run), `reaper`
(reap.lock), `loghistory` and `logs`.

A refusal is one line naming the path and the fix:
``bad permissions on <path>: writable by group or others (mode 0777); chmod 700 <path>``.
A directory or file of this user that others may only read (made by an older vcflow) is
made owner-only instead; the state directory itself, which the user chose, is left as it is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

DIR_MODE, FILE_MODE = 0o700, 0o600
#: open(2) flags of every state file vcflow opens: never through a link, never inherited
NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
DIRECTORY, FILE, FIFO = "directory", "regular file", "FIFO"
_IS = {DIRECTORY: stat.S_ISDIR, FILE: stat.S_ISREG, FIFO: stat.S_ISFIFO}
_FIX = {DIRECTORY: "chmod 700", FILE: "chmod 600", FIFO: "chmod 600"}


class Unsafe(Exception):
    """A path of the state directory that another user owns or can write, or that is not
    what belongs there (a link, a file where a FIFO belongs); str() is the refusal."""


def check(path: str, st: os.stat_result, kind: str) -> None:
    """Unsafe unless `st` (of `path`) is a `kind` of this user that no one else can write."""
    if not _IS[kind](st.st_mode):
        device = stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
        fix = "give another path" if device else "remove it"  # (never `rm /dev/null`)
        raise Unsafe(f"bad file at {path}: {_what(st.st_mode)}, not a {kind}; {fix}")
    me = os.geteuid()
    if st.st_uid != me:
        raise Unsafe(
            f"bad owner of {path}: uid {st.st_uid} owns it, not you (uid {me}); remove it, "
            "or run vcflow as its owner"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:
        raise Unsafe(
            f"bad permissions on {path}: writable by group or others (mode {mode:04o}); "
            f"{_FIX[kind]} {path}"
        )


def _what(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    for kind, test in _IS.items():
        if test(mode):
            return f"a {kind}"
    return "a special file"


def make_dir(path: str, *, parents: bool = False, follow: bool = False) -> None:
    """Create the directory `path` owner-only, or check the one there: Unsafe if it is not
    this user's own. `follow`: `path` may be a link (the state directory, which the user
    names); nothing inside it may. `parents`: make missing parents as mkdir -p does."""
    try:
        os.mkdir(path, DIR_MODE)
        return
    except FileNotFoundError:
        if not parents:
            raise
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, DIR_MODE)
            return
    except FileExistsError:
        pass
    st = os.stat(path) if follow else os.lstat(path)
    check(path, st, DIRECTORY)
    if st.st_mode & 0o077 and not follow:
        os.chmod(path, DIR_MODE)


def make_dirs(path: str, depth: int) -> None:
    """`make_dir` of the last `depth` components of `path`, outermost first (the one above
    them is checked already: the state directory)."""
    parts = []
    for _ in range(depth):
        parts.append(path)
        path = os.path.dirname(path)
    for part in reversed(parts):
        make_dir(part)


def check_dir(path: str) -> None:
    """Unsafe unless `path` is a directory (not a link to one) of this user only it can
    write; FileNotFoundError when there is none."""
    check(path, os.lstat(path), DIRECTORY)


def check_beneath(root: str, path: str) -> None:
    """Unsafe unless every directory from below `root` down to `path` is a real directory
    of this user (no link on the way out of `root`); FileNotFoundError when one is missing."""
    rel = os.path.relpath(path, root)
    if rel == ".":
        return
    if rel.startswith(".."):
        raise Unsafe(f"bad path {path}: not inside {root}")
    at = root
    for part in rel.split(os.sep):
        at = os.path.join(at, part)
        check_dir(at)


def open_checked(path: str, flags: int, kind: str = FILE, *, tighten: bool = True) -> int:
    """`path` opened with `flags` (never through a link; created owner-only with O_CREAT)
    and checked (`check`); Unsafe if it is not this user's own `kind`. `tighten`: made
    owner-only if others may read it."""
    try:
        fd = os.open(path, flags | NOFOLLOW, FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symbolic link
            raise Unsafe(f"bad file at {path}: a symbolic link, not a {kind}; remove it") from None
        raise
    try:
        st = os.fstat(fd)
        check(path, st, kind)
        if tighten and st.st_mode & 0o077:
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_lock(path: str) -> int:
    """A lock file, opened read-write (created owner-only if missing): `open_checked`."""
    return open_checked(path, os.O_RDWR | os.O_CREAT)


def fresh_fifo(path: str) -> tuple[int, int]:
    """Make the FIFO `path` anew, owner-only: one already there is removed when it is this
    user's (who made it cannot be known: never reuse it), refused when it is not. Returns
    the new FIFO's (st_dev, st_ino), which `open_fifo` checks."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if st.st_uid != os.geteuid():
            check(path, st, FIFO)  # (raises: the owner's refusal)
        os.unlink(path)
    os.mkfifo(path, FILE_MODE)
    st = os.lstat(path)
    return st.st_dev, st.st_ino


def check_stale_fifo(path: str) -> None:
    """Unsafe if something at `path` is another user's (`fresh_fifo` would refuse it)."""
    with contextlib.suppress(FileNotFoundError):
        st = os.lstat(path)
        if st.st_uid != os.geteuid():
            check(path, st, FIFO)


def open_fifo(path: str, flags: int, identity: tuple[int, int] | None = None) -> int:
    """The FIFO `path` opened with `flags`, never through a link; Unsafe if it is not this
    user's owner-only FIFO, or (`identity`) not the one made by `fresh_fifo`. OSError as
    open(2) gives it (ENXIO: no reader, with O_WRONLY|O_NONBLOCK; ENOENT)."""
    fd = open_checked(path, flags, FIFO)
    if identity is not None:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != identity:
            os.close(fd)
            raise Unsafe(f"bad file at {path}: not the FIFO this process made; remove it")
    return fd
