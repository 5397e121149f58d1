"""The bus Command (`bus.volcano.sh/v1alpha1`): how `vcctl job suspend|resume` (and vcflow's
`suspend|resume|terminate`) ask the job controller to act on a vcjob, bypassing policies
(volcano-vcjob §12). The runtime consumes and deletes each Command."""

from __future__ import annotations

from typing import Literal

from vcflow.api.meta import OwnerReference, Resource

BUS_API_VERSION = "bus.volcano.sh/v1alpha1"


class Command(Resource):
    api_version: Literal["bus.volcano.sh/v1alpha1"] = "bus.volcano.sh/v1alpha1"
    kind: Literal["Command"] = "Command"
    action: str = ""
    target_object: OwnerReference | None = None
    reason: str | None = None
    message: str | None = None
