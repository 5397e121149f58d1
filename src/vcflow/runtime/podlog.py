"""Which log a request for a pod's log reads, and reading it: `vcflow logs` and the server's
`GET .../pods/NAME/log` both come here. The attempt (`loghistory`) and container are picked,
a pod the store has but that never launched is explained from its status, and only the
pod's own log files are read: names must be DNS-1123 (they become paths) and a log is read
from its directory under the state directory by name, never through a link. Lines' times
(`--timestamps`, `--since`, `--since-time`: `Times`) are the log's time index's (`logtimes`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from vcflow.api import names
from vcflow.api.errors import InvalidName, NotFound
from vcflow.api.pod import Pod
from vcflow.podserver import logtimes, ownership, podfs
from vcflow.runtime import logs as podlogs
from vcflow.runtime.loghistory import Attempt, attempts


@dataclass(frozen=True)
class Times:
    """kubectl's `--timestamps`, `--since` (`since_seconds`) and `--since-time`
    (`since_time`, ns since the epoch): the log route's `timestamps`, `sinceSeconds` and
    `sinceTime`."""

    timestamps: bool = False
    since_seconds: float | None = None
    since_time: int | None = None

    def view(self) -> logtimes.View:
        """What to read, `since_seconds` counted back from now."""
        since = self.since_time
        if self.since_seconds is not None:
            since = time.time_ns() - round(self.since_seconds * 1e9)
        return logtimes.View(since, self.timestamps)


@dataclass(frozen=True)
class LogRequest:
    """What kubectl logs asks for (`attempt`: vcflow's extension, 1 = first, -1 = latest)."""

    namespace: str
    name: str
    container: str | None = None
    previous: bool = False
    tail: int | None = None
    attempt: int | None = None
    times: Times = Times()


@dataclass(frozen=True)
class Chosen:
    """The attempt and container a request reads; `follow` a live one with `stream`."""

    attempt: Attempt
    container: str
    unstarted: tuple[Attempt, ...]

    @property
    def live(self) -> bool:
        """The pod directory's attempt (a log that may still grow)."""
        return self.attempt.current


def check_names(namespace: str, name: str) -> None:
    """InvalidName unless both are names Kubernetes takes (they become paths)."""
    for what, value, problems in (
        ("namespace", namespace, names.dns1123_label_errors(namespace)),
        ("pod name", name, names.dns1123_subdomain_errors(name)),
    ):
        if problems or "\n" in value:
            why = "; ".join(problems) or "it holds a line break"
            raise InvalidName(f"invalid {what} {value!r}: {why}")


def every_attempt(
    state_dir: Path, namespace: str, name: str, stored: Pod | None
) -> tuple[list[Attempt], list[Attempt]]:
    """The pod's attempts whose logs are kept, oldest first, and the store's pod (`stored`)
    as the latest (a list of one) when it has not been launched. NotFound
    (`pods "NAME" not found`) if nothing is known of it."""
    found = attempts(state_dir, namespace, name)
    unstarted = _unstarted(state_dir, namespace, name, found, stored)
    if unstarted and found and found[-1].current:  # an ended pod its successor will replace
        found[-1] = dataclasses.replace(found[-1], current=False)
    return found, unstarted


def choose(state_dir: Path, request: LogRequest, stored: Pod | None) -> Chosen:
    """The attempt and container `request` reads; LogsError (or NotFound) saying why none."""
    check_names(request.namespace, request.name)
    state_dir = state_dir.absolute()
    found, unstarted = every_attempt(state_dir, request.namespace, request.name, stored)
    chosen = podlogs.pick_attempt(found + unstarted, request.attempt, request.name)
    if chosen in unstarted and not request.previous:
        _no_logs(request.name, stored)
    picked = request.container or chosen.default_container
    if picked is None:
        raise podlogs.LogsError(f'pod "{request.name}" not found')
    podlogs.check_container(chosen, picked, request.name)
    return Chosen(chosen, picked, tuple(unstarted))


def stream(
    state_dir: Path,
    chosen: Chosen,
    tail: int | None,
    *,
    idle: bool = False,
    times: Times = Times(),
) -> Generator[bytes, None, None]:
    """The live run's log as it is written, until that run ends (`logs.follow`; `idle`:
    an empty chunk instead of each wait)."""
    check_directory(state_dir.absolute(), chosen.attempt.directory)
    yield from podlogs.follow(
        chosen.attempt.directory, chosen.container, tail=tail, idle=idle, view=times.view()
    )


def read(state_dir: Path, request: LogRequest, chosen: Chosen) -> bytes:
    """The log of the chosen container in the chosen attempt (or the run before it); found
    again if it was moved (kept) while it was being read."""
    state_dir = state_dir.absolute()
    where = (state_dir, request.namespace, request.name)
    for _ in range(2):
        found = attempts(*where) + list(chosen.unstarted)
        again = next((a for a in found if a.number == chosen.attempt.number), None)
        path = (
            podlogs.run_log(found, again, chosen.container, previous=request.previous)
            if again
            else None
        )
        if path is None:
            break
        try:
            check_directory(state_dir, path.parent)
            return podlogs.read_path(path, request.tail, request.times.view())
        except FileNotFoundError:
            continue
    if request.previous:
        raise podlogs.LogsError(
            f'previous terminated container "{chosen.container}" in pod "{request.name}" not found'
        )
    return b""


def check_directory(state_dir: Path, directory: Path) -> None:
    """LogsError unless `directory` is a real directory of this user under `state_dir`
    (no link on the way: a log is read only where vcflow keeps it)."""
    try:
        ownership.check_beneath(str(state_dir), str(directory))
    except ownership.Unsafe as exc:
        raise podlogs.LogsError(f"the log is not read: {exc}") from None
    except FileNotFoundError:
        pass  # (moved while being read: found again by the caller)


def not_found(name: str) -> NotFound:
    return NotFound(f'pods "{name}" not found')


def _unstarted(
    state_dir: Path, namespace: str, name: str, found: list[Attempt], stored: Pod | None
) -> list[Attempt]:
    """The store's pod of that name as the latest attempt when it has not been launched (it
    is none of those `found`; the pod directory may still hold the pod it replaces, which
    ended): no log, its containers from its spec. [] if the store has it launched, or has
    no pod of that name (NotFound if nothing is known of it)."""
    if stored is None:
        if not found:
            raise not_found(name)
        return []
    uid = stored.metadata.uid
    if any(a.uid == uid for a in found):
        return []
    spec = stored.spec
    mains = [c.name or "" for c in (spec.containers or [])] if spec else []
    inits = [c.name or "" for c in (spec.init_containers or [])] if spec else []
    record = {
        "uid": uid,
        "containers": [*inits, *mains],
        "defaultContainer": mains[0] if mains else None,
        "status": stored.status.to_dict() if stored.status else {},
    }
    number = found[-1].number + 1 if found else 1
    pod_dir = state_dir / podfs.PODS / namespace / name
    return [Attempt(number, pod_dir, record, current=True)]


def _no_logs(name: str, stored: Pod | None) -> None:
    """Why a pod has no log: not in the store, failed to launch, or not started yet."""
    if stored is None:
        raise not_found(name)
    status = stored.status
    if status is not None and status.reason:
        detail = f": {status.message}" if status.message else ""
        raise podlogs.LogsError(
            f'pod "{name}" has no logs: it failed to start ({status.reason}){detail}'
        )
    phase = stored.phase or "Pending"
    raise podlogs.LogsError(f'pod "{name}" has no logs yet: it is {phase} and has not started')
