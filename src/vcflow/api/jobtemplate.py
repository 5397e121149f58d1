"""JobTemplate (`flow.volcano.sh/v1alpha1`): a vcjob spec kept for flows to instantiate.

`spec` is directly a vcjob JobSpec (reference §2.2); `status.jobDependsOnList` names the
vcjobs created from it that exist now (compatibility row 15).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from vcflow.api.meta import Resource, WireModel
from vcflow.api.vcjob import JobSpec


class JobTemplateStatus(WireModel):
    job_depends_on_list: list[str] | None = None


class JobTemplate(Resource):
    api_version: Literal["flow.volcano.sh/v1alpha1"] = "flow.volcano.sh/v1alpha1"
    kind: Literal["JobTemplate"] = "JobTemplate"
    spec: JobSpec | None = None
    status: JobTemplateStatus | None = None


def templates_by_namespace(objects: Iterable[object]) -> dict[str, dict[str, JobTemplate]]:
    """The JobTemplates among `objects`, by namespace and then by name (the last of a name
    given): what a batch's flows are resolved against."""
    found: dict[str, dict[str, JobTemplate]] = {}
    for obj in objects:
        if isinstance(obj, JobTemplate):
            found.setdefault(obj.namespace, {})[obj.name] = obj
    return found
