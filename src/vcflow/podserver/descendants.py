"""Every process a container starts ends with it, also one that left its process group
(`setsid`, `setpgid`): the pod server's side (`supervisor` asks, `server.Loop` drives).
Standard library only.

- **A cgroup** where one can be made (cgroup v2 mounted and writable, as root or in a
  delegated subtree): each run of a container gets its own, `<the server's cgroup>/
  vcflow-<pid>/c<n>`, and is born in it — the pod server moves itself in for the spawn and
  back (single-threaded: nothing else is spawned meanwhile), so no descendant forks before
  it is counted. When the container's main process exits (its end, a terminate, a
  deadline, a Ctrl-C of the run), `cgroup.kill` ends everything left in it.
- **Else a child subreaper** (`prctl(PR_SET_CHILD_SUBREAPER)`): a container's descendants
  whose parent died are re-parented to the pod server instead of init. Which container each
  belongs to is read from /proc, every `SCAN` seconds and just after containers end: the
  descendants of each running container are noted, and one adopted later is that
  container's; one the notes do not know is its process group leader's, else that of the
  containers that ended since the last look, else of every container running when it was
  found. It is killed, with all below it, once all of its containers have ended. Loss
  window: a process that leaves its group and its parent within `SCAN` of its start,
  while other pods run, lives until they end too.

The pod server is a subreaper in both cases, so that it reaps what it kills. Where neither
works (no prctl), a container's process group is all that is killed, as before.
`VCFLOW_CGROUPS=0` in the pod server's environment skips the cgroup (tests use it).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from vcflow.podserver import podfs

PR_SET_CHILD_SUBREAPER = 36
#: seconds between two looks at /proc for the running containers' descendants (subreaper)
SCAN = 1.0
#: seconds after a kill to look again for what it re-parented (subreaper)
AFTER_KILL = 0.05
#: seconds between two tries to remove a killed cgroup (its processes are on their way out)
TIDY = 0.1
CGROUP, SUBREAPER, GROUP = "cgroup", "subreaper", "group"

Proc = tuple[int, int]  # (pid, start time in clock ticks): a pid reused is another process


@dataclass
class Run:
    """One run of one container, as tracked."""

    number: int
    cgroup: str | None = None
    pid: int = 0
    known: set[Proc] = field(default_factory=set)  # its descendants, as last seen
    ended: bool = False
    inside: bool = False  # spawned in its cgroup


class Descendants:
    def __init__(self, *, cgroups: bool | None = None, subreaper: bool = True) -> None:
        self.me = os.getpid()
        self.subreaper = subreaper and _set_subreaper()
        want = os.environ.get("VCFLOW_CGROUPS", "1") != "0" if cgroups is None else cgroups
        self.home, self.base = _make_base(self.me) if want else (None, None)
        self.mode = CGROUP if self.base else SUBREAPER if self.subreaper else GROUP
        self.runs: dict[int, Run] = {}  # the runs not ended, by number
        self.count = 0
        self.doomed: list[str] = []  # cgroups killed, to remove once empty
        self.adopted: dict[Proc, set[int]] = {}  # adopted, not yet killed → owner runs
        self.just_ended: set[int] = set()  # runs ended since the last look
        self.left: dict[Proc, int] = {}  # descendants known of ended runs → their run
        self.next_scan: float | None = None

    # -- what the supervisor calls --------------------------------------------------------

    def new(self) -> Run:
        self.count += 1
        run = Run(self.count)
        if self.base is not None:
            path = os.path.join(self.base, f"c{run.number}")
            with contextlib.suppress(OSError):
                os.mkdir(path)
                run.cgroup = path
        self.runs[run.number] = run
        return run

    @contextlib.contextmanager
    def inside(self, run: Run) -> Iterator[None]:
        """The block (the spawn of `run`'s process) runs in `run`'s cgroup, if it has one."""
        moved = run.cgroup is not None and _write(run.cgroup, "cgroup.procs", str(self.me))
        run.inside = moved
        try:
            yield
        finally:
            if moved and self.home is not None:
                _write(self.home, "cgroup.procs", str(self.me))

    def started(self, run: Run, pid: int) -> None:
        run.pid = pid
        if run.cgroup is not None and not run.inside:  # (not born there: moved at once)
            _write(run.cgroup, "cgroup.procs", str(pid))

    def end(self, run: Run, now: float) -> None:
        """`run`'s main process ended (or never started): end what is left of it."""
        if run.ended:
            return
        run.ended = True
        self.runs.pop(run.number, None)
        if run.cgroup is not None:
            _write(run.cgroup, "cgroup.kill", "1")
            self.doomed.append(run.cgroup)
            self.tidy()
        elif self.mode == SUBREAPER:  # (the ends within AFTER_KILL share one look)
            self.just_ended.add(run.number)
            self.left.update(dict.fromkeys(run.known, run.number))
            soon = now + AFTER_KILL
            self.next_scan = soon if self.next_scan is None else min(self.next_scan, soon)

    def end_all(self, now: float) -> None:
        for run in list(self.runs.values()):
            self.end(run, now)
        self.look(now)

    # -- what the driver calls ------------------------------------------------------------

    def wake_at(self) -> float | None:
        """When `tick` has something to do (monotonic time), if ever."""
        if self.doomed:
            soon = time.monotonic() + TIDY
            return soon if self.next_scan is None else min(soon, self.next_scan)
        return self.next_scan

    def tick(self, now: float) -> None:
        self.tidy()
        if self.next_scan is not None and now >= self.next_scan:
            self.look(now)

    def tidy(self) -> None:
        """Remove the killed cgroups that are empty now; the base too, once nothing runs."""
        self.doomed = [path for path in self.doomed if not _rmdir(path)]

    def close(self) -> None:
        """The server exits: nothing of ours may outlive it."""
        self.end_all(0.0)
        for proc in list(self.adopted):
            _kill(proc)
        self.adopted.clear()
        self.tidy()
        if self.base is not None and not self.doomed:
            _rmdir(self.base)

    # -- the subreaper's bookkeeping ------------------------------------------------------

    def look(self, now: float) -> None:
        """Note the running containers' descendants; attribute, and kill as due, what the
        server adopted (subreaper mode)."""
        if self.mode != SUBREAPER:
            return
        table = _processes()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _start, _group) in table.items():
            children.setdefault(ppid, []).append(pid)
        live = {r.number: r for r in self.runs.values() if r.pid}
        mine = {r.pid for r in live.values()}
        for pid in children.get(self.me, []):  # (attributed by what was known before)
            proc = (pid, table[pid][1])
            if pid in mine or proc in self.adopted:
                continue
            self.adopted[proc] = self._owners(proc, table[pid][2], live)
        for run in live.values():  # (kept: a descendant orphaned later is still known)
            still = {p for p in run.known if table.get(p[0], (0, -1))[1] == p[1]}
            run.known = still | _below(run.pid, children, table)
        self.left = {p: n for p, n in self.left.items() if table.get(p[0], (0, -1))[1] == p[1]}
        killed = False
        for proc, owners in list(self.adopted.items()):
            if proc[0] not in table or table[proc[0]][1] != proc[1]:
                del self.adopted[proc]  # gone
            elif not owners & set(live):
                for below in _below(proc[0], children, table) | {proc}:
                    _kill(below)
                del self.adopted[proc]
                killed = True
            else:  # its descendants are its owners' too
                for number in owners & set(live):
                    live[number].known |= _below(proc[0], children, table)
        self.just_ended.clear()
        if killed:
            self.next_scan = now + AFTER_KILL  # (what the kills re-parented)
        elif self.runs or self.adopted:
            self.next_scan = now + SCAN
        else:
            self.next_scan = None

    def _owners(self, proc: Proc, group: int, live: dict[int, Run]) -> set[int]:
        known = {n for n, r in live.items() if proc in r.known}
        if known:
            return known
        if proc in self.left:
            return {self.left[proc]}
        led = {n for n, r in live.items() if r.pid == group}  # (its process group's leader)
        if led:
            return led
        if self.just_ended:
            return set(self.just_ended)
        return set(live)  # (none: killed at once)


# -- cgroups ---------------------------------------------------------------------------------


def _make_base(me: int) -> tuple[str | None, str | None]:
    """(this process's cgroup, a new cgroup for the containers under it), or (None, None)
    when cgroup v2 is not there or not ours to change."""
    home = _own_cgroup()
    if home is None:
        return None, None
    _remove_stale(home)
    base = os.path.join(home, f"vcflow-{me}")
    try:
        os.mkdir(base, 0o755)
    except FileExistsError:
        pass
    except OSError:
        return None, None
    probe = os.path.join(base, "probe")
    ok = False
    with contextlib.suppress(OSError):
        os.mkdir(probe)
        ok = _write(probe, "cgroup.procs", str(me)) and _write(home, "cgroup.procs", str(me))
        ok = ok and os.path.exists(os.path.join(probe, "cgroup.kill"))
    _rmdir(probe)
    if not ok:
        _rmdir(base)
        return None, None
    return home, base


def _remove_stale(home: str) -> None:
    """The cgroups of a pod server that died (its pid is not alive): its pods are lost
    (`SupervisorLost`, whose processes are killed), so is what is left in them — also what
    left their process groups, which a reaper, knowing only the groups, cannot find. The
    directories go once empty (at the latest when the next server starts)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(home):
            pid = entry.name.removeprefix("vcflow-")
            if entry.name.startswith("vcflow-") and pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    for child in os.scandir(entry.path):
                        if child.is_dir(follow_symlinks=False):
                            _write(child.path, "cgroup.kill", "1")
                            _rmdir(child.path)
                _rmdir(entry.path)


def _alive(pid: int) -> bool:
    """Is `pid` a process, not a zombie (a server killed, not yet reaped, is dead)?"""
    try:
        return podfs.proc_stat(pid)[0] not in podfs.ENDED
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _own_cgroup() -> str | None:
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
        with open("/proc/self/mountinfo") as f:
            mounts = f.read().splitlines()
    except OSError:
        return None
    own = next((line[3:] for line in lines if line.startswith("0::")), None)
    if own is None:
        return None
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if right.split()[:1] == ["cgroup2"] and len(fields) >= 5:
            root, point = fields[3], fields[4]
            if own == root or own.startswith(root.rstrip("/") + "/"):
                return os.path.join(point, own[len(root.rstrip("/")) :].lstrip("/"))
    return None


def _write(directory: str, name: str, text: str) -> bool:
    try:
        fd = os.open(os.path.join(directory, name), os.O_WRONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        os.write(fd, text.encode())
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _rmdir(path: str) -> bool:
    """Removed (or gone already)."""
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


# -- processes -------------------------------------------------------------------------------


def _set_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _processes() -> dict[int, tuple[int, int, int]]:
    """pid → (parent pid, start time, process group) of every process, from /proc."""
    out: dict[int, tuple[int, int, int]] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                fields = podfs.proc_stat(int(name))
            except OSError:
                continue
            if fields[0] in podfs.ENDED:
                continue
            out[int(name)] = (int(fields[1]), int(fields[19]), int(fields[2]))
    return out


def _below(
    pid: int, children: dict[int, list[int]], table: dict[int, tuple[int, int, int]]
) -> set[Proc]:
    found: set[Proc] = set()
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.add((child, table[child][1]))
        todo += children.get(child, [])
    return found


def _kill(proc: Proc) -> None:
    pid, start = proc
    try:
        if int(podfs.proc_stat(pid)[19]) != start:
            return  # (another process now)
        os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError, IndexError):
        return
