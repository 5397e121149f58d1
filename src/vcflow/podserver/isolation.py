"""Start a container process in a private mount view (and its job's network namespace):
the pod server's side of volumes and of distributed jobs. Standard library only.

`spawn.spawn` calls `spawn_isolated` for a container whose spec.json entry carries an
`isolation` plan (`launch` writes one only when the pod needs it: the fast path forks no
Python and makes no namespace). The plan, all paths absolute::

    {"user": bool,              # also a user namespace (not root: unprivileged namespaces)
     "network": "<key>" | null, # join the network namespace of that key, else make it
     "hostname": "<name>" | null,  # with a network: the host name (own UTS namespace)
     "mounts": [[source, target, read_only], ...],  # bind mounts, in order
     "shadow": "<empty dir>" | null}   # a root for mount points missing on this machine

The child, between fork and exec: its own process group, signals reset, stdin /dev/null,
stdout/stderr to the log; `unshare` (or `setns` into a live member of the job's network
namespace, with its user namespace first when unprivileged), the loopback up in a new
network namespace, `/` made private, the binds (read-only ones remounted so), then
chroot into the shadow root if there is one, chdir, execve. A failure is written to a
close-on-exec pipe, so the parent reports it as a `spawn.StartFailure` (exit code 128,
or 127/126 for an executable not found or not executable).

Shadow root: a mount point that does not exist on this machine (`/data`) is not created on
the host. Instead a tmpfs is mounted on the shadow directory, every entry of `/` is
bind-mounted into it (recursively; symlinks copied), the directories on the way to each
missing mount point are made there (their existing siblings bind-mounted), and the process
is chrooted into it: it sees the machine's files plus its mount points, and nothing on the
host changes.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import os
import signal
import socket
import struct
from typing import Any, NoReturn

from vcflow.podserver import podfs

CLONE_NEWNS, CLONE_NEWUTS = 0x00020000, 0x04000000
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
_ST_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC))
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

_libc: Any = None


def _c() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def unshare(flags: int) -> None:
    _check(_c().unshare(flags), "unshare")


def setns(fd: int, kind: int) -> None:
    _check(_c().setns(fd, kind), "setns")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    def enc(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    result = _c().mount(enc(source), enc(target), enc(fstype), flags, enc(data) if data else None)
    _check(result, f"mount {source or fstype or ''} on {target}")


# -- network namespaces of jobs -----------------------------------------------------------

#: key → the (pid, start time) of processes started in that key's network namespace, in
#: this pod server: a new container of the key joins a live one's namespace, else makes
#: a new one. The kernel keeps a namespace while a process is in it, so nothing is held.
_members: dict[str, list[tuple[int, int | None]]] = {}


def _open_member(key: str, user: bool) -> list[int]:
    """Descriptors of the namespaces (user first, when `user`, then network) of a live
    process of `key`, opened here so that they outlive it until the child joined them;
    [] when none lives (the child makes new ones). Forgets keys no process lives for."""
    for other in [k for k, ms in _members.items() if not any(podfs.same_process(*m) for m in ms)]:
        del _members[other]
    for pid, start in _members.get(key, []):
        fds: list[int] = []
        try:
            for kind in ("user", "net") if user else ("net",):
                fds.append(os.open(f"/proc/{pid}/ns/{kind}", os.O_RDONLY))
        except OSError:
            _close(fds)
            continue
        if podfs.same_process(pid, start):  # not a reused pid
            return fds
        _close(fds)
    return []


def _close(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _join_or_make_network(member: list[int], user: bool) -> None:
    if not member:
        ids = os.geteuid(), os.getegid()
        unshare(CLONE_NEWNET | (CLONE_NEWUSER if user else 0))
        if user:
            _map_ids(*ids)
        _loopback_up()
        return
    kinds = (CLONE_NEWUSER, CLONE_NEWNET) if user else (CLONE_NEWNET,)
    for fd, kind in zip(member, kinds, strict=True):
        setns(fd, kind)


def _map_ids(uid: int, gid: int) -> None:
    """Map our own uid and gid (read before the unshare) to themselves in the new user
    namespace: the process keeps its identity; its capabilities there last until exec."""
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1")


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


# -- mounts -------------------------------------------------------------------------------


def _bind(source: str, target: str, read_only: bool) -> None:
    mount(source, target, None, MS_BIND | MS_REC)
    if read_only:
        st = os.statvfs(target)
        locked = sum(flag for st_flag, flag in _ST_FLAGS if st.f_flag & st_flag)
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | locked)


def _stub(source: str, target: str) -> bool:
    """Make `target` (on the tmpfs) stand for `source`; True if it is to be bind-mounted."""
    if os.path.islink(source):
        os.symlink(os.readlink(source), target)
        return False
    if os.path.isdir(source):
        os.mkdir(target)
    else:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    return True


def _shadow(host: str, new: str, wanted: dict[str, Any]) -> None:
    """Fill `new` (an empty directory on the tmpfs) with `host`'s entries, bind-mounted,
    except those on the way to a missing mount point (`wanted`: a tree of path parts),
    which are made and filled the same way."""
    try:
        names = os.listdir(host)
    except OSError:  # a missing or unreadable directory: only what is wanted below it
        names = []
    for name in names:
        src, dst = os.path.join(host, name), os.path.join(new, name)
        if name in wanted and os.path.isdir(src) and not os.path.islink(src):
            os.mkdir(dst)
            _shadow(src, dst, wanted[name])
        elif _stub(src, dst):
            mount(src, dst, None, MS_BIND | MS_REC)
    for name, below in wanted.items():
        dst = os.path.join(new, name)
        if not os.path.lexists(dst):
            os.mkdir(dst)
            _shadow(os.path.join(host, name), dst, below)


def _missing_tree(targets: list[str]) -> dict[str, Any]:
    """The path parts leading to each target that does not exist here."""
    tree: dict[str, Any] = {}
    for target in targets:
        if os.path.lexists(target):
            continue
        node = tree
        for part in [p for p in target.split("/") if p]:
            node = node.setdefault(part, {})
    return tree


def _mount_all(plan: dict[str, Any], is_dir: dict[str, bool]) -> str:
    """Make the plan's mounts; the root the process is to see."""
    mounts = [(str(s), str(t), bool(ro)) for s, t, ro in plan.get("mounts") or []]
    missing = _missing_tree([t for _, t, _ in mounts])
    root = "/"
    if missing:
        root = str(plan["shadow"])
        os.makedirs(root, exist_ok=True)
        mount("tmpfs", root, "tmpfs", 0, "mode=755")
        _shadow("/", root, missing)
    for source, target, read_only in mounts:
        where = os.path.join(root, target.lstrip("/"))
        if not os.path.lexists(where):
            if is_dir[source]:
                os.makedirs(where)
            else:
                os.makedirs(os.path.dirname(where), exist_ok=True)
                os.close(os.open(where, os.O_WRONLY | os.O_CREAT, 0o644))
        _bind(source, where, read_only)
    return root


# -- the spawn ----------------------------------------------------------------------------


def spawn_isolated(
    argv: list[str],
    env: dict[str, str],
    cwd: str,
    log_fd: int,
    plan: dict[str, Any],
    reset: tuple[int, ...],
) -> int | tuple[int, str]:
    """Fork, set the child up as the module docstring says, exec `argv`: the child's pid,
    or (exit code, message) when it could not start (the child is reaped then)."""
    key = plan.get("network")
    member = _open_member(str(key), bool(plan.get("user"))) if key else []
    is_dir = {str(s): os.path.isdir(str(s)) for s, _, _ in plan.get("mounts") or []}

    def child(report: int) -> NoReturn:
        """The child, between fork and exec: never returns; why it could not exec is
        written to `report`."""
        code, stage = 128, "set up"
        try:
            os.setpgid(0, 0)
            for sig in reset:
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(log_fd, 1)
            os.dup2(log_fd, 2)
            user = bool(plan.get("user"))
            stage = "network namespace"
            if plan.get("network"):
                _join_or_make_network(member, user)
                unshare(CLONE_NEWNS | CLONE_NEWUTS)
                if plan.get("hostname"):
                    socket.sethostname(str(plan["hostname"]))
            else:
                stage = "mount namespace"
                ids = os.geteuid(), os.getegid()
                unshare(CLONE_NEWNS | (CLONE_NEWUSER if user else 0))
                if user:
                    _map_ids(*ids)
            stage = "mounts"
            mount(None, "/", None, MS_REC | MS_PRIVATE)
            root = _mount_all(plan, is_dir)
            if root != "/":
                os.chroot(root)
            stage = "working directory"
            try:
                os.chdir(cwd)
            except OSError as exc:
                raise OSError(
                    exc.errno, f"chdir to working directory {cwd!r}: {str(exc.strerror).lower()}"
                ) from None
            stage = "exec"
            exe = podfs.find_executable(argv[0], env.get("PATH"), cwd)
            if exe is None:
                code = 127
                raise OSError(
                    errno.ENOENT, f'exec: "{argv[0]}": executable file not found in $PATH'
                )
            try:
                os.execve(exe, argv, env)
            except OSError as exc:
                code = 127 if exc.errno == errno.ENOENT else 126
                raise OSError(
                    exc.errno, f'exec: "{argv[0]}": {str(exc.strerror).lower()}'
                ) from None
        except BaseException as exc:  # the child must never return into the pod server
            message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            if stage not in ("working directory", "exec"):
                message = f"cannot isolate the container ({stage}): {message}"
            with contextlib.suppress(BaseException):
                os.write(report, message.encode())
        os._exit(code)

    read_end, write_end = os.pipe()  # both close-on-exec
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        child(write_end)
    os.close(write_end)
    _close(member)
    chunks = []
    while chunk := os.read(read_end, 4096):
        chunks.append(chunk)
    os.close(read_end)
    if chunks:
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        return (code if code > 0 else 128), b"".join(chunks).decode(errors="replace")
    if key:
        _members.setdefault(str(key), []).append((pid, podfs.process_start(pid, zombie=True)))
    return pid


@functools.cache
def usable() -> bool:
    """Can this process give pods private namespaces (a user namespace too when it is not
    root)? Probed once per process (`available`)."""
    return available(os.geteuid() != 0)


def available(user: bool) -> bool:
    """Can this process make the namespaces a plan needs? Probed in a child."""
    pid = os.fork()
    if pid == 0:
        try:
            unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWUTS | (CLONE_NEWUSER if user else 0))
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0
