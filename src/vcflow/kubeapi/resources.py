"""The API resources vcflow serves and reads, as the Kubernetes API names them: group,
version, plural, kind, short names, scope and subresources. One table for the server's
routes and discovery, the Kubernetes-API store backend's URLs and the CLI's kind names.
"""

from __future__ import annotations

from dataclasses import dataclass

from vcflow.api import config, names, scheduling
from vcflow.api.command import Command
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.lease import Lease
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.kubeapi.eventsv1 import EventV1

#: what every served resource allows (kubectl's discovery words)
VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class APIResource:
    model: type[Resource]
    group: str  # "" for the core group
    version: str
    kind: str
    plural: str
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()  # "status", "log", "binding"
    namespaced: bool = True

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def api_version(self) -> str:
        """`flow.volcano.sh/v1alpha1`, or `v1` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def prefix(self) -> str:
        """The URL path of the group version: `/apis/flow.volcano.sh/v1alpha1`, `/api/v1`."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def path(self, namespace: str | None, name: str = "", subresource: str = "") -> str:
        """`/apis/G/V/namespaces/NS/PLURAL[/NAME[/SUB]]` (all namespaces when None);
        `/apis/G/V/PLURAL[/NAME[/SUB]]` for a cluster-scoped resource, whatever the
        namespace."""
        scope = f"/namespaces/{namespace}" if namespace is not None and self.namespaced else ""
        url = f"{self.prefix}{scope}/{self.plural}"
        if name:
            url += f"/{name}"
            if subresource:
                url += f"/{subresource}"
        return url


JOBFLOWS = APIResource(
    JobFlow, names.GROUP_FLOW, "v1alpha1", "JobFlow", "jobflows", ("jf",), ("status",)
)
JOBTEMPLATES = APIResource(
    JobTemplate,
    names.GROUP_FLOW,
    "v1alpha1",
    "JobTemplate",
    "jobtemplates",
    ("jt",),
    ("status",),
)
VCJOBS = APIResource(
    VCJob, names.GROUP_BATCH, "v1alpha1", "Job", "jobs", ("vcjob", "vj"), ("status",)
)
COMMANDS = APIResource(Command, "bus.volcano.sh", "v1alpha1", "Command", "commands")
PODS = APIResource(Pod, "", "v1", "Pod", "pods", ("po",), ("status", "log", "binding"))
EVENTS = APIResource(Event, "", "v1", "Event", "events", ("ev",))
#: the events API: served from the core Events' storage (server.eventsv1), as kube does
EVENTS_V1 = APIResource(EventV1, "events.k8s.io", "v1", "Event", "events", ("ev",))
CONFIGMAPS = APIResource(config.ConfigMap, "", "v1", "ConfigMap", "configmaps", ("cm",))
SECRETS = APIResource(config.Secret, "", "v1", "Secret", "secrets")
LEASES = APIResource(Lease, "coordination.k8s.io", "v1", "Lease", "leases")
#: cluster-scoped (stored under namespace `""`, `api.clusterscope`); short names as
#: Volcano's CRD and kube-apiserver give them
QUEUES = APIResource(
    scheduling.Queue,
    "scheduling.volcano.sh",
    "v1beta1",
    "Queue",
    "queues",
    ("q", "queue-v1beta1"),
    ("status",),
    namespaced=False,
)
PRIORITY_CLASSES = APIResource(
    scheduling.PriorityClass,
    "scheduling.k8s.io",
    "v1",
    "PriorityClass",
    "priorityclasses",
    ("pc",),
    namespaced=False,
)

ALL: tuple[APIResource, ...] = (
    JOBFLOWS,
    JOBTEMPLATES,
    VCJOBS,
    COMMANDS,
    PODS,
    EVENTS,
    CONFIGMAPS,
    SECRETS,
    EVENTS_V1,
    LEASES,
    QUEUES,
    PRIORITY_CLASSES,
)
_BY_MODEL = {resource.model: resource for resource in ALL}
#: resources served from another resource's storage (their routes are their own)
STORED_AS = {EVENTS_V1: EVENTS}
_BY_PATH = {(r.group, r.version, r.plural): r for r in ALL}


def of_model(model: type[Resource]) -> APIResource:
    """The resource that holds `model`; KeyError for a model vcflow does not serve."""
    return _BY_MODEL[model]


def find(group: str, version: str, plural: str) -> APIResource | None:
    """The resource at `/apis/{group}/{version}/.../{plural}` (group "" for `/api/v1`)."""
    return _BY_PATH.get((group, version, plural))


def group_versions() -> dict[str, list[APIResource]]:
    """`group/version` (or `v1`) → its resources, in table order."""
    found: dict[str, list[APIResource]] = {}
    for resource in ALL:
        found.setdefault(resource.api_version, []).append(resource)
    return found
