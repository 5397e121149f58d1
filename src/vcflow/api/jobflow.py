"""JobFlow (`flow.volcano.sh/v1alpha1`): spec (flows, dependsOn, patch) and status.

Wire names are Volcano's, typos included (`unKnowJobs`). vcflow's additive fields
(`spec.arguments`, an entry's `template`, `dependsOn.strategy` and `outcome`, `retryPolicy`
with the names of Volcano's retry design, `activeDeadlineSeconds`, status condition
`reason`/`message`, the retry bookkeeping of `jobStatusList`, `spec.queue` and
`spec.priorityClassName`) are optional, so every Volcano manifest means what it meant
(compatibility rows 5, 18, 20, 21, 22, 25; docs/flow-features.md, docs/scheduling.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, Strict, model_validator

from vcflow.api import phases
from vcflow.api.meta import Resource, WireModel
from vcflow.api.vcjob import JobSpec

LaxEnum = Strict(False)


class HttpHeader(WireModel):
    name: str
    value: str


class HttpGet(WireModel):
    task_name: str | None = None
    path: str | None = None
    port: int | None = None
    http_header: HttpHeader | None = None


class TcpSocket(WireModel):
    task_name: str | None = None
    port: int


class TaskStatusProbe(WireModel):
    task_name: str | None = None
    phase: str | None = None


class Probe(WireModel):
    http_get_list: list[HttpGet] | None = None
    tcp_socket_list: list[TcpSocket] | None = None
    task_status_list: list[TaskStatusProbe] | None = None

    def is_empty(self) -> bool:
        return not (self.http_get_list or self.tcp_socket_list or self.task_status_list)


class DependsOn(WireModel):
    targets: list[str] | None = None
    probe: Probe | None = None
    strategy: Annotated[phases.DependencyStrategy, LaxEnum] | None = None
    outcome: Annotated[phases.DependencyOutcome, LaxEnum] | None = None


#: A Kubernetes duration (`30s`, `5m`): a string; a number is kept so admission can say
#: what to write instead.
Duration = str | int | float


class Backoff(WireModel):
    """`retryPolicy.backoff`; `jitter` is vcflow's addition."""

    type: Annotated[phases.BackoffType, LaxEnum] | None = None
    base_delay: Duration | None = None
    max_delay: Duration | None = None
    jitter: float | int | None = None


class RetryPolicy(WireModel):
    """`retryPolicy` at spec and entry level (Volcano's retry design doc, PR #4567)."""

    max_retries: int | None = None
    policy: Annotated[phases.RetryStrategy, LaxEnum] | None = None
    backoff: Backoff | None = None


class Patch(WireModel):
    """`patch.jobSpec` (canonical) or `patch.spec` (the design doc's alias, compatibility row 3)."""

    job_spec: JobSpec | None = Field(
        default=None,
        validation_alias=AliasChoices("jobSpec", "spec", "job_spec"),
        serialization_alias="jobSpec",
    )

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any) -> Any:
        if isinstance(data, dict) and "jobSpec" in data and "spec" in data:
            raise ValueError("give either patch.jobSpec or its alias patch.spec, not both")
        return data


class ForEach(WireModel):
    """vcflow: an entry's fan-out — one vcjob per item (docs/flow-features.md section 19);
    exactly one of `items`, `fromArgument`, `fromOutput`."""

    items: list[Any] | None = None
    #: an argument holding a JSON list
    from_argument: str | None = None
    #: `TARGET.KEY`: a target's output holding a JSON list, read when the target completed
    from_output: str | None = None
    #: at most this many of the entry's vcjobs unfinished at once (default: all)
    parallelism: int | None = None


class SwitchCase(WireModel):
    """vcflow: one case of an entry's `switch`; one without `when` is taken when none holds."""

    when: str | None = None
    template: str


class Flow(WireModel):
    """One flow entry: vcjob `<flow>-<name>` made from JobTemplate `template`, else `name`."""

    name: str
    #: vcflow: the entry's JobTemplate when it is not the one named as the entry
    template: str | None = None
    depends_on: DependsOn | None = None
    #: vcflow: a CEL expression; false skips the entry (docs/flow-features.md section 13)
    when: str | None = None
    #: vcflow: the first case whose `when` holds picks the JobTemplate (section 13)
    switch: list[SwitchCase] | None = None
    #: vcflow: one vcjob per item, `<flow>-<entry>-<index>` (section 19)
    for_each: ForEach | None = Field(
        default=None, validation_alias="for", serialization_alias="for"
    )
    patch: Patch | None = None
    retry_policy: RetryPolicy | None = None
    active_deadline_seconds: int | None = None
    #: Volcano's vcjob field (a Go duration): ranks the entry on the critical path
    #: (docs/scheduling.md)
    running_estimate: str | None = None

    @property
    def template_name(self) -> str:
        """The JobTemplate this entry's vcjob is built from."""
        return self.name if self.template is None else self.template

    @property
    def templates_named(self) -> list[str]:
        """Every JobTemplate the entry may be built from: its `switch` cases' (section 13),
        else `template_name`."""
        if self.switch:
            return list(dict.fromkeys(case.template for case in self.switch))
        return [self.template_name]

    @property
    def targets(self) -> list[str]:
        if self.depends_on is None or self.depends_on.targets is None:
            return []
        return self.depends_on.targets

    @property
    def strategy(self) -> phases.DependencyStrategy:
        if self.depends_on is None or self.depends_on.strategy is None:
            return phases.DependencyStrategy.ALL
        return self.depends_on.strategy

    @property
    def outcome(self) -> phases.DependencyOutcome:
        if self.depends_on is None or self.depends_on.outcome is None:
            return phases.DependencyOutcome.COMPLETED
        return self.depends_on.outcome

    @property
    def probe(self) -> Probe | None:
        probe = self.depends_on.probe if self.depends_on is not None else None
        return None if probe is None or probe.is_empty() else probe


class Argument(WireModel):
    """A flow argument; one without `value` is required: it is given one at submit time."""

    name: str
    value: str | None = None
    description: str | None = None


class Handover(WireModel):
    #: hold a finished job's resources for its successors this long (0 = off)
    hold_seconds: int | None = None


class SchedulingPolicy(WireModel):
    """vcflow: how the flow's jobs meet the scheduler (docs/scheduling.md)."""

    #: `Flow`: a job queues with its flow's age; `Job` (default): with its own
    age_from: str | None = None
    #: `CriticalPath`: ready jobs rank by their longest remaining path; `FlowOrder` (default)
    job_order: str | None = None
    handover: Handover | None = None
    #: `Hold`: a flow a stage of which can never fit stays Pending; `Ignore` (default)
    admission: str | None = None


class JobFlowSpec(WireModel):
    flows: list[Flow] | None = None
    #: vcflow: the flow's arguments (docs/flow-features.md section 10)
    arguments: list[Argument] | None = None
    #: vcflow: entries run once every other entry has ended (section 14)
    on_exit: list[str] | None = None
    job_retain_policy: Annotated[phases.RetainPolicy, LaxEnum] | None = None
    retry_policy: RetryPolicy | None = None
    active_deadline_seconds: int | None = None
    #: vcflow: the `queue` and `priorityClassName` of every vcjob of the flow (an entry's
    #: patch still wins; docs/scheduling.md)
    queue: str | None = None
    priority_class_name: str | None = None
    scheduling_policy: SchedulingPolicy | None = None


class JobRunningHistory(WireModel):
    start_timestamp: str | None = None
    end_timestamp: str | None = None
    state: str | None = None


class JobStatus(WireModel):
    name: str = ""
    state: str | None = None
    start_timestamp: str | None = None
    end_timestamp: str | None = None
    restart_count: int | None = None
    running_histories: list[JobRunningHistory] | None = None
    #: vcflow: the current attempt (1 when absent), the attempt the retry budget counts
    #: from, and while a retry waits, when the next attempt's vcjob is created
    attempt: int | None = None
    first_attempt: int | None = None
    next_attempt_time: str | None = None
    #: vcflow: the outputs of the entry's completed vcjob (docs/flow-features.md section 12)
    outputs: dict[str, Any] | None = None
    #: vcflow: the JobTemplate a `switch` picked, and the case's index
    template: str | None = None
    switch_case: int | None = None


class Condition(WireModel):
    """Per-vcjob condition; vcflow adds `Waiting` entries with `reason`/`message` (row 18)."""

    phase: str | None = None
    create_time: str | None = None
    running_duration: str | None = None
    task_status_count: dict[str, Any] | None = None
    reason: str | None = None
    message: str | None = None


class FlowState(WireModel):
    phase: Annotated[phases.FlowPhase, LaxEnum] | None = None
    #: vcflow: why the flow ended so (`DeadlineExceeded`)
    reason: str | None = None
    message: str | None = None


class CompactJobStatus(WireModel):
    """vcflow: all job records of a flow too big for Volcano's layout (docs/status-size.md)."""

    # Present only then; `data` holds every status list, `jobStatusList` item and
    # `conditions` entry (`api.compactstatus`), and Volcano's fields the entries users act on.

    version: int
    encoding: str
    #: how many items `data` holds of each field it replaces (`jobStatusList`,
    #: `conditions`, `completedJobs`, ...): what Volcano's layout would list
    counts: dict[str, int]
    data: str


class JobFlowStatus(WireModel):
    pending_jobs: list[str] | None = None
    running_jobs: list[str] | None = None
    failed_jobs: list[str] | None = None
    completed_jobs: list[str] | None = None
    terminated_jobs: list[str] | None = None
    un_know_jobs: list[str] | None = None
    job_status_list: list[JobStatus] | None = None
    conditions: dict[str, Condition] | None = None
    state: FlowState | None = None
    #: vcflow: the last `vcflow retry` request carried out (the annotation's JSON)
    last_retry: str | None = None
    #: vcflow: the records of a flow too big for Volcano's layout (docs/status-size.md)
    compact_job_status: CompactJobStatus | None = None

    @property
    def phase(self) -> str:
        return str(self.state.phase) if self.state and self.state.phase else ""


class JobFlow(Resource):
    api_version: Literal["flow.volcano.sh/v1alpha1"] = "flow.volcano.sh/v1alpha1"
    kind: Literal["JobFlow"] = "JobFlow"
    spec: JobFlowSpec | None = None
    status: JobFlowStatus | None = None

    @property
    def flows(self) -> list[Flow]:
        if self.spec is None or self.spec.flows is None:
            return []
        return self.spec.flows

    @property
    def uses_language(self) -> bool:
        """Does the flow use the flow language (docs/flow-features.md section 9):
        `spec.arguments` (even empty), `spec.onExit`, or an entry's `template`, `when`,
        `switch` or `for`? Only such a flow's vcjobs get more than their template's spec (the
        `VCFLOW_*` variables, substitution)."""
        if self.spec is not None and (
            self.spec.arguments is not None or self.spec.on_exit is not None
        ):
            return True
        return any(
            e.template is not None
            or e.when is not None
            or e.switch is not None
            or e.for_each is not None
            for e in self.flows
        )

    @property
    def exit_handlers(self) -> list[str]:
        """The entries named in `spec.onExit` (section 14)."""
        if self.spec is None or self.spec.on_exit is None:
            return []
        return self.spec.on_exit

    @property
    def retain_policy(self) -> phases.RetainPolicy:
        if self.spec is None or self.spec.job_retain_policy is None:
            return phases.RetainPolicy.RETAIN
        return self.spec.job_retain_policy

    @property
    def phase(self) -> str:
        return self.status.phase if self.status else ""
