"""What vcflow's local runtime cannot give a pod template is a warning at admission, never
a silent drop: volume sources with no local meaning always, mount paths other than the host
path and the svc plugin's names only where this machine has no private namespaces."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.admission import review
from vcflow.api.jobtemplate import JobTemplate


def _template(pod: dict[str, Any], **spec: Any) -> JobTemplate:
    task = {"name": "t", "replicas": 1, "template": {"spec": pod}}
    return JobTemplate.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobTemplate",
            "metadata": {"name": "j"},
            "spec": {"tasks": [task], **spec},
        }
    )


def _warnings(obj: JobTemplate, isolation: bool | None) -> list[str]:
    found = review.review(obj, context=review.Context(isolation=isolation))
    return [f"{e.path}: {e.message}" for e in found if e.warning]


POD = {
    "restartPolicy": "Never",
    "volumes": [
        {"name": "claim", "persistentVolumeClaim": {"claimName": "c"}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "same", "hostPath": {"path": "/srv/data"}},
    ],
    "containers": [
        {
            "name": "main",
            "command": ["true"],
            "volumeMounts": [
                {"name": "claim", "mountPath": "/claim"},
                {"name": "scratch", "mountPath": "/scratch"},
                {"name": "same", "mountPath": "/srv/data"},
            ],
        }
    ],
}


@pytest.mark.parametrize("isolation", [True, None], ids=["namespaces", "unknown"])
def test_a_claim_warns_everywhere_and_mount_paths_only_without_namespaces(
    isolation: bool | None,
) -> None:
    assert _warnings(_template(POD), isolation) == [
        "spec.tasks[0].template.spec.volumes[0].persistentVolumeClaim: volume 'claim': "
        "persistentVolumeClaim volumes are not available in vcflow's local runtime: containers "
        "run without it (hostPath, emptyDir, configMap and secret volumes work)"
    ]


def test_without_namespaces_a_moved_mount_path_and_svc_names_warn() -> None:
    found = _warnings(_template(POD, plugins={"svc": []}), False)
    assert len(found) == 3
    assert found[0].startswith(
        "spec.plugins: the svc plugin's host names (<job>-<task>-<index>.<job>) do not "
        "resolve on this machine"
    )
    assert "$VCFLOW_HOSTS_FILE" in found[0]
    assert found[1].startswith("spec.tasks[0].template.spec.volumes[0].persistentVolumeClaim")
    assert found[2] == (
        "spec.tasks[0].template.spec.containers[0].volumeMounts[1].mountPath: mountPath "
        "'/scratch' cannot be honoured on this machine (no private mount namespaces): the "
        "process finds the volume's directory in $VCFLOW_VOLUME_SCRATCH"
    )  # and none for the hostPath mounted at its own path


def test_volcano_job_volumes_warn() -> None:
    pod = {"restartPolicy": "Never", "containers": [{"name": "m", "command": ["true"]}]}
    found = _warnings(
        _template(pod, volumes=[{"mountPath": "/ckpt", "volumeClaimName": "c"}]), True
    )
    assert found == [
        "spec.volumes[0]: volume mountPath '/ckpt': Volcano's job volumes "
        "(PersistentVolumeClaims) are not made by vcflow's local runtime; its containers run "
        "without it"
    ]
