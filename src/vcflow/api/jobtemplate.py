"""JobTemplate (`flow.volcano.sh/v1alpha1`): a vcjob spec kept for flows to instantiate.

`spec` is directly a vcjob JobSpec (reference §2.2); `status.jobDependsOnList` names the
vcjobs created from it that exist now (compatibility row 15).
"""

from __future__ import annotations

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
