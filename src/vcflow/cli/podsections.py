"""`vcflow describe pod`: the pod's job and task, node, phase, and per container its
command, state, exit code and restarts — with the note that images are not pulled locally."""

from __future__ import annotations

from vcflow.api.pod import ContainerStatus, Pod
from vcflow.cli.sections import NONE, Text

IMAGE_NOTE = "(not pulled: the local runtime runs the command on this machine)"


def pod_sections(pod: Pod, text: Text) -> None:
    status = pod.status
    spec = pod.spec
    labels = pod.metadata.labels
    text.fields(
        [
            ("Job", labels.get("volcano.sh/job-name", NONE)),
            ("Task", labels.get("volcano.sh/task-spec", NONE)),
            ("Node", (spec.node_name if spec else None) or NONE),
            ("Status", (status.phase if status else None) or NONE),
            ("Reason", (status.reason if status else None) or NONE),
            ("Restart Policy", (spec.restart_policy if spec else None) or "Always"),
        ]
    )
    by_name = {c.name: c for c in (status.container_statuses or [])} if status else {}
    text.heading("Containers")
    for container in (spec.containers or []) if spec else []:
        name = container.name or ""
        text.heading(name, 1)
        command = [*(container.command or []), *(container.args or [])]
        text.fields(
            [
                ("Image", f"{container.image or NONE} {IMAGE_NOTE}"),
                ("Command", " ".join(command) or NONE),
                *_state(by_name.get(name)),
            ],
            2,
        )


def _state(status: ContainerStatus | None) -> list[tuple[str, str]]:
    if status is None or status.state is None:
        return [("State", "Waiting")]
    state = status.state
    rows: list[tuple[str, str]] = []
    if state.running is not None:
        rows.append(("State", "Running"))
        rows.append(("Started", state.running.started_at or NONE))
    elif state.terminated is not None:
        done = state.terminated
        rows.append(("State", "Terminated"))
        rows.append(("Reason", done.reason or NONE))
        rows.append(("Exit Code", str(done.exit_code)))
        rows.append(("Finished", done.finished_at or NONE))
    elif state.waiting is not None:
        rows.append(("State", "Waiting"))
        rows.append(("Reason", state.waiting.reason or NONE))
    rows.append(("Ready", str(status.ready)))
    rows.append(("Restart Count", str(status.restart_count)))
    return rows
