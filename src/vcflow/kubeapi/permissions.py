"""The Kubernetes permissions `vcflow operator` and `vcflow webhook` need, as RBAC rules:
one table that deploy/'s ClusterRoles and Role grant exactly (tests/deploy/test_rbac.py
compares them) and docs/kubernetes.md explains. Group and resource names come from
`resources` for the kinds vcflow serves; leases and events.k8s.io events are named here.
"""

from __future__ import annotations

from dataclasses import dataclass

from vcflow.kubeapi import resources
from vcflow.kubeapi.resources import APIResource

READ = ("get", "list", "watch")


@dataclass(frozen=True)
class Rule:
    """RBAC's `apiGroups: [group]`, `resources: [resource]`, `verbs`, and why it is needed;
    `names`: its `resourceNames` (empty: any object)."""

    group: str  # "" for the core group
    resource: str  # a plural, or `plural/subresource`
    verbs: tuple[str, ...]
    why: str
    names: tuple[str, ...] = ()


def _of(resource: APIResource, verbs: tuple[str, ...], why: str, sub: str = "") -> Rule:
    return Rule(resource.group, f"{resource.plural}/{sub}" if sub else resource.plural, verbs, why)


#: the operator's ClusterRole: the JobFlow and JobTemplate controllers over the cluster
OPERATOR: tuple[Rule, ...] = (
    _of(resources.JOBFLOWS, (*READ, "update", "patch"), "watch flows; finalizers, metadata"),
    _of(resources.JOBFLOWS, ("get", "update", "patch"), "write a flow's status", "status"),
    _of(
        resources.JOBFLOWS,
        ("update",),
        "set ownerReferences with blockOwnerDeletion on vcjobs",
        "finalizers",
    ),
    _of(resources.JOBTEMPLATES, (*READ, "update", "patch"), "read templates; their metadata"),
    _of(resources.JOBTEMPLATES, ("update", "patch"), "write a template's status", "status"),
    _of(
        resources.VCJOBS,
        (*READ, "create", "update", "patch", "delete"),
        "create, retry and delete a flow's vcjobs",
    ),
    _of(resources.VCJOBS, ("get",), "read a vcjob's status", "status"),
    _of(
        resources.COMMANDS,
        ("create",),
        "terminate a vcjob past its deadline (a TerminateJob Command, as vcctl sends)",
    ),
    _of(
        resources.PODS,
        (*READ, "patch"),
        "probes read the pod IPs of a target's tasks; a flow's labels put on its vcjobs' pods",
    ),
    Rule("", "events", ("create", "patch"), "events (core/v1, older clusters)"),
    Rule("events.k8s.io", "events", ("create", "patch"), "events (events.k8s.io/v1)"),
    Rule(
        "scheduling.volcano.sh",
        "queues",
        READ,
        "admission Hold: a flow against its Queue's capability and state",
    ),
    Rule(
        "scheduling.volcano.sh",
        "podgroups",
        READ,
        "why a waiting vcjob is unschedulable, into its flow's status",
    ),
    Rule(
        "scheduling.k8s.io",
        "priorityclasses",
        READ,
        "the PriorityClasses a flow's vcjobs name (docs/scheduling.md)",
    ),
)

#: the operator's Role in Volcano's namespace: `--scheduling-mode auto` reads vc-scheduler's
#: configuration, that one ConfigMap only (`operator.schedconf`)
SCHEDULER_NAMESPACE = "volcano-system"
OPERATOR_SCHEDULER: tuple[Rule, ...] = (
    Rule(
        "",
        "configmaps",
        ("get",),
        "--scheduling-mode auto: is vc-scheduler's sla plugin on",
        ("volcano-scheduler-configmap",),
    ),
)

#: the operator's Role in its own namespace: leader election
OPERATOR_NAMESPACED: tuple[Rule, ...] = (
    Rule("coordination.k8s.io", "leases", ("get", "create", "update"), "leader election"),
)

#: the webhook's ClusterRole: the delete checks read flows and templates (compatibility row 11)
WEBHOOK: tuple[Rule, ...] = (
    _of(resources.JOBFLOWS, READ, "a delete of a template an unfinished flow uses"),
    _of(resources.JOBTEMPLATES, READ, "a flow's templates"),
)
