"""A flow's vcjobs carry the directory the flow (else its template) was applied from, so
the runtime that runs them later starts their containers there (`api.workdir`)."""

from __future__ import annotations

import pytest

from vcflow.api import workdir
from vcflow.api.jobflow import Flow, JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.reconcile import jobs


def _flow(annotations: dict[str, str]) -> JobFlow:
    return JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "f", "annotations": annotations},
            "spec": {"flows": [{"name": "a"}]},
        }
    )


def _template(annotations: dict[str, str]) -> JobTemplate:
    return JobTemplate.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobTemplate",
            "metadata": {"name": "a", "annotations": annotations},
            "spec": {"tasks": []},
        }
    )


@pytest.mark.parametrize(
    ("flow_dir", "template_dir", "expected"),
    [("/f", "/t", "/f"), (None, "/t", "/t"), (None, None, None)],
    ids=["flow-wins", "template-else", "none"],
)
def test_the_vcjob_records_the_flows_else_the_templates_directory(
    flow_dir: str | None, template_dir: str | None, expected: str | None
) -> None:
    def ann(d: str | None) -> dict[str, str]:
        return {workdir.ANNOTATION: d} if d else {}

    job = jobs.build_job(_flow(ann(flow_dir)), Flow(name="a"), _template(ann(template_dir)))
    assert job.metadata.annotations.get(workdir.ANNOTATION) == expected
    assert set(job.metadata.annotations) - {workdir.ANNOTATION} == {
        "volcano.sh/createdByJobTemplate",
        "volcano.sh/createdByJobFlow",
    }


def test_stamp_keeps_a_recorded_directory_and_skips_other_kinds() -> None:
    flow, template = _flow({workdir.ANNOTATION: "/kept"}), _template({})
    workdir.stamp([flow, template], "/here")
    assert workdir.of(flow) == "/kept" and workdir.of(template) == "/here"
