"""A pod log the API server refused, said with its likely cause: the API server reads a
container's log from the kubelet of the pod's node, so a 5xx on `pods/NAME/log` means that
kubelet could not be reached or could not answer (a kwok node has none). Shared by
`vcflow logs` and the dashboard. Pure.
"""

from __future__ import annotations

import re

from vcflow.api.pod import Pod

#: a 5xx answer as KubeStore words it (`kubestore.status`)
SERVER_FAILED = re.compile(r"Error from server \((InternalError|ServiceUnavailable|Unknown)\)")


def explained(message: str, pod: Pod | None) -> str:
    """`message` with what a 5xx means on a cluster (naming `pod`'s node when known);
    any other message as it is."""
    if not SERVER_FAILED.match(message):
        return message
    node = pod.spec.node_name if pod is not None and pod.spec is not None else None
    where = f"node {node}" if node else "the pod's node"
    return (
        f"{message} (the API server reads a pod's log from the kubelet of {where}, and could not)"
    )
