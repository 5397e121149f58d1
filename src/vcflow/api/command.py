"""The bus Command (`bus.volcano.sh/v1alpha1`): how `vcctl job suspend|resume` (and vcflow's
`suspend|resume|terminate`) ask the job controller to act on a vcjob, bypassing policies
(volcano-vcjob §12). The runtime consumes and deletes each Command."""

from __future__ import annotations

import uuid
from typing import Literal

from vcflow.api.meta import ObjectMeta, OwnerReference, Resource, controller_reference
from vcflow.api.phases import Action

BUS_API_VERSION = "bus.volcano.sh/v1alpha1"


class Command(Resource):
    api_version: Literal["bus.volcano.sh/v1alpha1"] = "bus.volcano.sh/v1alpha1"
    kind: Literal["Command"] = "Command"
    action: str = ""
    target_object: OwnerReference | None = None
    reason: str | None = None
    message: str | None = None


def command_for(job: Resource, action: Action, *, reason: str = "UserCommand") -> Command:
    """A Command asking the job controller to run `action` on the vcjob `job` (owned by
    it, so deleting the job removes it)."""
    ref = controller_reference(job, block_owner_deletion=False)
    suffix = uuid.uuid4().hex[:5]
    return Command(
        metadata=ObjectMeta(
            name=f"{job.name[:200]}-{action.lower()}-{suffix}",
            namespace=job.namespace,
            owner_references=[ref.model_copy(update={"controller": None})],
        ),
        action=str(action),
        target_object=ref,
        reason=reason,
        message=f"{action} requested with vcflow",
    )
