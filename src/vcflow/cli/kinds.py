"""The kinds the CLI verbs take, by every name kubectl users type for them.

`resolve("jf")` → the JobFlow `Kind`: its model, plural and group for kubectl's words
(`jobflow.flow.volcano.sh/test`, `jobflows.flow.volcano.sh "test" not found`). Unknown
names are usage errors (exit 2) listing what is accepted. `targets` reads the arguments
kubectl's `get` and `wait` take: `KIND[,KIND...] [NAME...]` or `KIND/NAME...`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import typer

from vcflow.api import clusterscope, config, names, scheduling
from vcflow.api.errors import NotFound, VcflowError
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.store.base import Store

R = TypeVar("R", bound=Resource)


@dataclass(frozen=True)
class Kind:
    model: type[Resource]
    singular: str  # lower-case kind: `jobflow`, `job`
    plural: str
    group: str
    aliases: tuple[str, ...]  # short names and other spellings users type

    @property
    def resource(self) -> str:
        """`jobflows.flow.volcano.sh`, kubectl's name for the resource type."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def ref(self, name: str) -> str:
        """`jobflow.flow.volcano.sh/test`, as `-o name` and apply print it."""
        return f"{self.singular}.{self.group}/{name}" if self.group else f"{self.singular}/{name}"

    def quoted(self, name: str) -> str:
        """`jobflow.flow.volcano.sh "test"`, as delete prints it."""
        if not self.group:
            return f'{self.singular} "{name}"'
        return f'{self.singular}.{self.group} "{name}"'

    def not_found(self, name: str) -> NotFound:
        return NotFound(f'Error from server (NotFound): {self.resource} "{name}" not found')

    def find(
        self, store: Store, namespace: str, wanted: Sequence[str]
    ) -> tuple[list[Resource], list[str]]:
        """The objects named `wanted` (each once, in order), and the names not found."""
        found: list[Resource] = []
        missing: list[str] = []
        for name in dict.fromkeys(wanted):
            try:
                found.append(store.get(self.model, namespace, name))
            except NotFound:
                missing.append(name)
        return found, missing

    @property
    def namespaced(self) -> bool:
        """False for a Queue or PriorityClass: `-n` is ignored for it, as kubectl does."""
        return not clusterscope.is_cluster_scoped(self.model)

    def names(self) -> set[str]:
        """Every accepted spelling (compared lower-case)."""
        spelled = {self.singular, self.plural, *self.aliases}
        for word in (self.singular, self.plural):
            if self.group:
                spelled |= {f"{word}.{self.group}", f"{word}.{self.group.split('.')[0]}"}
        return spelled


JOBFLOW = Kind(JobFlow, "jobflow", "jobflows", names.GROUP_FLOW, ("jf",))
JOBTEMPLATE = Kind(JobTemplate, "jobtemplate", "jobtemplates", names.GROUP_FLOW, ("jt",))
VCJOB = Kind(VCJob, "job", "jobs", names.GROUP_BATCH, ("vcjob", "vcjobs", "vj"))
POD = Kind(Pod, "pod", "pods", "", ("po",))
CONFIGMAP = Kind(config.ConfigMap, "configmap", "configmaps", "", ("cm",))
SECRET = Kind(config.Secret, "secret", "secrets", "", ())
QUEUE = Kind(scheduling.Queue, "queue", "queues", "scheduling.volcano.sh", ("q", "queue-v1beta1"))
PRIORITYCLASS = Kind(
    scheduling.PriorityClass, "priorityclass", "priorityclasses", "scheduling.k8s.io", ("pc",)
)
ALL = (JOBFLOW, JOBTEMPLATE, VCJOB, POD, CONFIGMAP, SECRET, QUEUE, PRIORITYCLASS)


def act_on_each(
    store: Store, model: type[R], namespace: str, wanted: Sequence[str], act: Callable[[R], str]
) -> None:
    """`act` on the objects named `wanted` (each once, in order), going on past a name it
    cannot act on as kubectl does: a missing one, or one `act` turns down (it returns why,
    else ""), is a problem line; the lines are one VcflowError once the others are done."""
    kind = next(k for k in ALL if k.model is model)
    problems: list[str] = []
    for name in dict.fromkeys(wanted):
        try:
            obj = store.get(model, namespace, name)
        except NotFound:
            problems.append(str(kind.not_found(name)))
            continue
        why = act(obj)
        if why:
            problems.append(why)
    if problems:
        raise VcflowError("\n".join(problems))


#: What `--help` says a KIND argument may be.
HELP = (
    "jobflow (jf), jobtemplate (jt), vcjob (vj; also job, meaning the Volcano batch job), "
    "pod (po), configmap (cm), secret, queue (q) or priorityclass (pc); singular, plural or "
    "full (jobflows.flow.volcano.sh)"
)

_BY_NAME = {spelling: kind for kind in ALL for spelling in kind.names()}


def resolve(text: str) -> Kind:
    """The kind a user typed; a usage error (exit 2) listing the kinds if unknown."""
    kind = _BY_NAME.get(text.lower())
    if kind is None:
        raise typer.BadParameter(f'unknown kind "{text}": use {HELP}', param_hint="KIND")
    return kind


@dataclass(frozen=True)
class Target:
    """One kind a command reads, and the names asked for (none: every object)."""

    kind: Kind
    names: tuple[str, ...] = ()


def targets(arguments: Sequence[str], *, param_hint: str = "KIND") -> list[Target]:
    """`jf,jt [NAME...]` (each kind, the same names) or `jf/test jt/a` (grouped by kind, in
    the order given): one Target per kind. Mixing the forms is a usage error, as in kubectl."""
    if not arguments:
        raise typer.BadParameter("give a kind (KIND [NAME...] or KIND/NAME)", param_hint=param_hint)
    first, rest = arguments[0], arguments[1:]
    if "/" not in first:
        if any("/" in arg for arg in rest):
            raise typer.BadParameter(
                "there is no need to specify a resource type as a separate argument when "
                "passing arguments in resource/name form (e.g. 'vcflow get jobflow/test' "
                "instead of 'vcflow get jobflow jobflow/test')",
                param_hint=param_hint,
            )
        spelled = [word for word in first.split(",") if word]
        if not spelled:
            raise typer.BadParameter(f'no kind in "{first}"', param_hint=param_hint)
        chosen = dict.fromkeys(resolve(word) for word in spelled)
        return [Target(kind, tuple(dict.fromkeys(rest))) for kind in chosen]
    grouped: dict[Kind, list[str]] = {}
    for arg in arguments:
        word, slash, name = arg.partition("/")
        if not slash or not word or not name or "/" in name:
            raise typer.BadParameter(
                f'"{arg}": arguments in resource/name form must have a single resource and name',
                param_hint=param_hint,
            )
        names = grouped.setdefault(resolve(word), [])
        if name not in names:
            names.append(name)
    return [Target(kind, tuple(names)) for kind, names in grouped.items()]


def of(obj: Resource) -> Kind:
    """The kind of an object the CLI handles."""
    for kind in ALL:
        if isinstance(obj, kind.model):
            return kind
    raise ValueError(f"the CLI does not handle kind {obj.kind}")
