"""JobTemplate and vcjob admission: Volcano's vcjob create rules (reference §6.4) applied to a
JobTemplate's spec (SEMANTICS row 17), with Volcano's messages. Pure.

PLACEHOLDER: the full rule set is being written; see issue 2.
"""

from __future__ import annotations

from vcflow.api.errors import FieldError
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobSpec, VCJob


def validate_job_spec(spec: JobSpec, *, path: str = "spec", job_name: str = "") -> list[FieldError]:
    """Every problem of a vcjob spec under the vcjob create rules (queue state excluded)."""
    return []


def validate_jobtemplate(template: JobTemplate) -> list[FieldError]:
    if template.spec is None:
        return []
    return validate_job_spec(template.spec, job_name=template.name)


def validate_vcjob(job: VCJob) -> list[FieldError]:
    if job.spec is None:
        return []
    return validate_job_spec(job.spec, job_name=job.name)
