"""The JobTemplate status: `jobDependsOnList` is exactly the vcjobs created from the template
that exist now (compatibility rows 14, 15; Volcano's only grows). Pure."""

from __future__ import annotations

from collections.abc import Iterable

from vcflow.api import names
from vcflow.api.jobtemplate import JobTemplate, JobTemplateStatus
from vcflow.api.vcjob import VCJob


def selector(template: JobTemplate) -> dict[str, str]:
    """The label selector of the vcjobs created from `template`."""
    value = names.created_by_value(template.namespace, template.name)
    return {names.LABEL_CREATED_BY_TEMPLATE: value}


def template_status(job_names: Iterable[str]) -> JobTemplateStatus | None:
    """The status to write: the sorted names of the vcjobs carrying the template's label
    (`selector`), or None when there are none."""
    found = sorted(job_names)
    return JobTemplateStatus(job_depends_on_list=found) if found else None


def template_of(job: VCJob) -> tuple[str, str] | None:
    """(namespace, template name) a vcjob was created from, read from its label; unlike
    Volcano, names containing `.` work (row 14): the namespace has none, so split once."""
    value = job.metadata.labels.get(names.LABEL_CREATED_BY_TEMPLATE)
    if not value or "." not in value:
        return None
    ns, name = value.split(".", 1)
    return ns, name
