"""The operator's scheduling mode at start: `--scheduling-mode`, or for `auto` vc-scheduler's
configuration read once from ConfigMap volcano-system/volcano-scheduler-configmap (a `get`
on that one name: deploy/rbac/operator.yaml). `reconcile.schedmode` decides; this reads and
logs. A ConfigMap that cannot be read (missing, forbidden, unreachable) means `none`, with
a warning naming why. Called by `operator.process` once, before the controllers start.
"""

from __future__ import annotations

import logging

from vcflow.api.errors import VcflowError
from vcflow.kubestore import KubeClient
from vcflow.reconcile import schedmode
from vcflow.reconcile.schedmode import Mode

log = logging.getLogger("vcflow.operator")
PATH = f"/api/v1/namespaces/{schedmode.CONFIGMAP_NAMESPACE}/configmaps/{schedmode.CONFIGMAP_NAME}"


def read(client: KubeClient) -> tuple[str | None, str]:
    """The configuration's text (None when it cannot be had) and, if so, why not."""
    try:
        response = client.request("GET", PATH)
    except VcflowError as exc:
        return None, f"reading {PATH}: {exc}"
    if response.status == 404:
        return None, ""
    if not response.ok:
        return None, f"reading {PATH}: HTTP {response.status}"
    data = response.json().get("data") or {}
    text = data.get(schedmode.CONFIGMAP_KEY)
    if not isinstance(text, str):
        return None, f"{PATH} has no key {schedmode.CONFIGMAP_KEY}"
    return text, ""


def mode(client: KubeClient, given: Mode, *, ladder: bool) -> Mode:
    """The mode to run in, logged with its reason (a warning when the configuration could
    not be read)."""
    conf, problem = (None, "") if given is not Mode.AUTO else read(client)
    if problem:
        log.warning("scheduling: %s; taking mode none", problem)
        chosen, why = Mode.NONE, problem
    else:
        chosen, why = schedmode.resolve(given, conf, ladder=ladder)
        if why.startswith("unreadable"):
            log.warning("scheduling: %s; taking mode none", why)
    log.info("scheduling: mode %s (%s)", chosen, why)
    return chosen
