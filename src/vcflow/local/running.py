"""`vcflow.run()`: apply manifests and run their JobFlows (and vcjobs applied alone) on this
machine, as `vcflow run` does, from Python.

    result = vcflow.run("examples/jobflow/")            # files, directories or objects
    result.succeeded, result.exit_code                   # True, 0
    [(j.entry, j.phase, j.duration) for j in result.flows[0].jobs]

Bad input raises `ValidationFailed` (every problem, one line each) and writes nothing;
another process running the state directory's controllers raises `LockHeld`. The pieces
`vcflow run` shares with it are here too: `holding` (the state directory's store, with its
controller lock held for the run), `options`, `runnable` and `targets`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from vcflow.admission import unknown
from vcflow.api import arguments as flowargs
from vcflow.api import workdir
from vcflow.api.errors import ArgumentError, FieldError, InputError, ValidationFailed
from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import Resource
from vcflow.api.vcjob import VCJob
from vcflow.kubeapi import fieldvalidation
from vcflow.local import manifests, statedir
from vcflow.local.progress import Change, Progress
from vcflow.local.result import RunResult
from vcflow.local.session import LocalRun, Options
from vcflow.podserver import logrotate
from vcflow.reconcile.vcjob.resources import Capacity
from vcflow.runtime import resources
from vcflow.store import SqliteStore
from vcflow.store.base import ApplyResult

Source = str | os.PathLike[str] | Resource


class NothingToRun(InputError):
    """Manifests with neither a JobFlow nor a vcjob: a run would only store them."""


class NoObjectsToRun(manifests.NoObjects, NothingToRun):
    """No object at all (`error: no objects passed to run`): `vcflow.run()` raises it, so
    `except vcflow.NothingToRun` catches an empty input too."""

    def __init__(self) -> None:
        super().__init__("run")


def run(
    sources: Source | Iterable[Source],
    *,
    state_dir: str | os.PathLike[str] = statedir.DEFAULT,
    timeout: float | None = None,
    capacity: str | None = None,
    fail_fast: bool = False,
    working_dir: str | os.PathLike[str] | None = None,
    on_change: Change | None = None,
    stop: Callable[[], bool] | None = None,
    container_log_max_size: str | int | None = None,
    container_log_max_files: int | None = None,
    arguments: Mapping[str, str] | None = None,
    validate: str = "strict",
) -> RunResult:
    """Apply `sources` — manifest files, directories (their *.yaml, *.yml, *.json) or
    objects — to the store in `state_dir`, then run their flows here until each has ended
    and no pod process is left (see `vcflow run`). `capacity` is `--capacity`'s text
    (`cpu=8,memory=16Gi,nvidia.com/gpu=2`; default: this machine); `working_dir` is where
    containers without a `workingDir` start (default: the current directory; recorded on
    the objects, as `vcflow apply` does); `on_change(what, phase, seconds)` hears every
    phase change; `stop()` True ends the run as Ctrl-C does; `container_log_max_size`
    (`10Mi`, or bytes) and `container_log_max_files` rotate each container's log as the
    kubelet does (default 10Mi and 5); `arguments` are the flows' arguments given, as
    `-p NAME=VALUE` gives them (written into every flow that declares the name; one that
    none declares raises ArgumentError); `validate` is `--validate`: a field vcflow does not
    know raises ValidationFailed (`strict`, the default), or is let be (`warn`, `ignore`)."""
    objects = load(sources, arguments, validate)
    runnable(objects)
    workdir.stamp(objects, os.path.abspath(working_dir or os.getcwd()))
    rotation = log_limits(container_log_max_size, container_log_max_files)
    run_options = options(capacity, timeout=timeout, fail_fast=fail_fast, log_limits=rotation)
    with holding(Path(state_dir)) as store:
        flows, jobs = targets(store.apply(objects))
        progress = Progress(flows, jobs, on_change=on_change)
        session = LocalRun(
            store,
            Path(state_dir),
            progress,
            run_options,
        )
        return session.run(stop=stop or _never)


def _never() -> bool:
    return False


def load(
    sources: Source | Iterable[Source],
    arguments: Mapping[str, str] | None = None,
    validate: str = "strict",
) -> list[Resource]:
    """The objects of `sources` (paths are read and reviewed as `vcflow validate` does,
    objects given looked at for unknown fields), the `arguments` given written into the
    flows that declare them; ValidationFailed with every problem, NoObjectsToRun (a
    NothingToRun) when there is none, ArgumentError for an argument no flow declares."""
    try:
        validation = fieldvalidation.Validation(validate)
    except ValueError:
        raise InputError(
            f"validate={validate!r}: must be one of {', '.join(fieldvalidation.Validation)}"
        ) from None
    items: Sequence[Source] = (
        [sources] if isinstance(sources, str | os.PathLike | Resource) else list(sources)
    )
    paths = [os.fspath(s) for s in items if not isinstance(s, Resource)]
    given = [s.clone() if arguments else s for s in items if isinstance(s, Resource)]
    loaded = manifests.load(paths, arguments, validation) if paths else None
    if validation is fieldvalidation.Validation.STRICT:
        strange = [e for obj in given for e in _unknown_fields(obj)]
        if strange:
            raise ValidationFailed(strange)
    objects = (loaded.objects if loaded is not None else []) + given
    if arguments:  # (the names checked against every flow, the objects' ones included)
        try:
            flowargs.give([obj for obj in objects if isinstance(obj, JobFlow)], arguments)
        except ArgumentError:
            if loaded is None or loaded.all_typed or not loaded.errors:
                raise
    if loaded is not None and loaded.errors:
        raise ValidationFailed(list(loaded.errors))
    if not objects:
        raise NoObjectsToRun()
    return objects


def _unknown_fields(obj: Resource) -> list[FieldError]:
    """The unknown fields of an object given, as errors naming it (`--validate=strict`)."""
    found = fieldvalidation.judged(unknown.unknown_fields(obj), fieldvalidation.Validation.STRICT)
    return [e.with_object(kind=obj.kind, namespace=obj.namespace, name=obj.name) for e in found]


def options(
    capacity: str | None,
    *,
    timeout: float | None,
    fail_fast: bool,
    log_limits: logrotate.Limits | None = None,
) -> Options:
    """A run's options: the machine (`--capacity`'s text on top of this host's CPUs,
    memory and GPUs, `resources.machine`), the timeout, `--fail-fast` and the container
    logs' rotation."""
    machine = resources.machine(capacity)
    return Options(
        capacity=Capacity(machine.capacity),
        gpus=machine.gpus,
        timeout=timeout,
        fail_fast=fail_fast,
        log_limits=log_limits or logrotate.KUBELET,
    )


def log_limits(max_size: str | int | None, max_files: int | None) -> logrotate.Limits:
    """`logrotate.limits`, bad values an InputError naming the option."""
    try:
        return logrotate.limits(max_size, max_files)
    except ValueError as exc:
        raise InputError(f"container log rotation: {exc}") from None


def runnable(objects: Iterable[Resource]) -> None:
    """NothingToRun unless a JobFlow or a vcjob is among `objects` (checked before anything
    is written)."""
    if not any(isinstance(obj, JobFlow | VCJob) for obj in objects):
        raise NothingToRun(
            "nothing to run: no JobFlow or vcjob among the objects "
            "(`vcflow apply` stores JobTemplates without running anything)"
        )


@contextmanager
def holding(state_dir: Path) -> Iterator[SqliteStore]:
    """The state directory's store, with its controller lock taken for the whole block
    (LockHeld if another process runs the controllers there)."""
    state_dir = statedir.resolve(state_dir)
    with (
        statedir.opened(state_dir) as store,
        statedir.ControllerLock(state_dir, statedir.CONTROLLER) as lock,
    ):
        statedir.acquire_for_controller(lock)
        yield store


def targets(results: Iterable[ApplyResult]) -> tuple[list[JobFlow], list[VCJob]]:
    """The applied flows and vcjobs, as stored: what a run runs."""
    applied = [r.object for r in results]
    flows = [obj for obj in applied if isinstance(obj, JobFlow)]
    jobs = [obj for obj in applied if isinstance(obj, VCJob)]
    return flows, jobs
