"""The network of a job with the svc plugin, as its pods see it locally: host names that
resolve and ports of its own (`kubelet_bridge.pod_request` plans it; `isolation` makes it).

On a cluster every pod has an address and `<job>-<task>-<k>.<job>` resolves to it. Here,
where private namespaces are usable (`isolation.usable`):
- the job's pods share one network namespace of their own, made by its first container
  and joined by the others: a loopback only, so a port one job binds (`0.0.0.0:29500`)
  never collides with another job's; the pods cannot reach other machines or the host's
  own services (annotation `vcflow.io/network: host` on the vcjob, or in its pod template's
  metadata — what a JobTemplate sets —, keeps the host's network);
- each pod has an address of its own in it, 127.0.0.2 onwards in host-list order, and its
  host name (`hostname` in the container: the pod's); a hosts file that maps every pod
  of the job, written to `<pod dir>/etc/hosts`, is bind-mounted over `/etc/hosts`.
With the host's network (the annotation, or no namespaces) every name maps to 127.0.0.1
and ports are shared with the machine. Either way `$VCFLOW_HOSTS_FILE` names the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vcflow.api import volumes
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import pods
from vcflow.reconcile.vcjob import spec as jobspec

ANNOTATION = "vcflow.io/network"
HOST = "host"
HOSTS_FILE = "etc/hosts"
LOCAL_IP = "127.0.0.1"


@dataclass(frozen=True)
class Network:
    key: str | None  # the job's network namespace; None: the host's network
    hosts: str  # the hosts file's content
    address: str  # this pod's address


def plan(job: VCJob, pod: Pod, *, isolated: bool) -> Network | None:
    """The network of `pod` (a pod of `job`); None when the job has no svc plugin."""
    plugins = jobspec.plugins(job)
    if not any(p in plugins for p in volumes.SVC_PLUGINS):
        return None
    asked = pod.metadata.annotations.get(ANNOTATION) or job.metadata.annotations.get(ANNOTATION)
    own = isolated and asked != HOST
    hosts = [h for task in jobspec.task_specs(job) for h in pods.task_hosts(job, task)]
    spec = pod.spec
    me = f"{spec.hostname or pod.name}.{spec.subdomain or job.name}" if spec else ""
    lines = [f"{LOCAL_IP}\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
    lines.append(f"# vcflow: the pods of job {job.namespace}/{job.name} (svc plugin)")
    address = LOCAL_IP
    for n, host in enumerate(dict.fromkeys(hosts)):
        ip = _address(n) if own else LOCAL_IP
        lines.append(f"{ip}\t{host} {host.split('.')[0]}")
        if host == me:
            address = ip
    key = f"{job.namespace}/{job.name}/{job.metadata.uid}" if own else None
    return Network(key, "\n".join(lines) + "\n", address)


def _address(n: int) -> str:
    """127.0.0.2, 127.0.0.3, ... 127.0.1.0, ... (never .1, the loopback's own)."""
    m = n + 2
    return f"127.{(m >> 16) & 255}.{(m >> 8) & 255}.{m & 255}"


def hosts_path(pod_dir: Path) -> Path:
    return pod_dir / HOSTS_FILE
