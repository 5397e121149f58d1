"""`vcflow run` of a flow whose `when` fails: the entry shows Failed with WhenError in the
final table, what depended on it waits, and the exit handler still runs, told the flow
failed (docs/flow-features.md sections 13, 14)."""

from __future__ import annotations

from pathlib import Path

from .flows import cli, flow, template

SCRIPT = 'echo "{\\"n\\": 1}" > "$VCFLOW_OUTPUTS"; echo "phase=$VCFLOW_FLOW_PHASE"'
FLOW = template("step", SCRIPT) + flow(
    "edge",
    "{name: a, template: step}",
    '{name: b, template: step, dependsOn: {targets: [a]}, when: "outputs.a.missing == 1"}',
    "{name: c, template: step, dependsOn: {targets: [b]}}",
    "{name: bye, template: step}",
    spec="  onExit: [bye]\n",
)


def test_a_when_error_fails_the_entry_and_the_exit_handler_still_runs(tmp_path: Path) -> None:
    (tmp_path / "flow.yaml").write_text(FLOW)
    state = tmp_path / "state"
    done = cli(state, "run", "-f", str(tmp_path / "flow.yaml"), "--no-live")
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {line.split()[1]: line for line in done.stdout.splitlines() if line.startswith("edge ")}
    assert rows["b"].split()[2] == "Failed"
    assert "WhenError: when: no such member in mapping: 'missing'" in rows["b"]
    assert "waiting for all of: b (Failed)" in rows["c"]
    assert rows["bye"].split()[2] == "Completed"
    assert done.stdout.splitlines()[-1].startswith("flow edge Failed in ")
    log = state / "pods" / "default" / "edge-bye-t-0" / "main.0.log"
    assert log.read_text().strip() == "phase=Failed"
