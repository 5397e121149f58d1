"""Termination messages, as the kubelet provides them: each container's file in the pod
directory (`$VCFLOW_OUTPUTS` names it when the container's env has that variable), copied
into `state.terminated.message` when a run ends, at most 4096 bytes — real processes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from vcflow.podserver import podfs
from vcflow.reconcile.outputs import ENV_OUTPUTS, MESSAGE_MAX
from vcflow.runtime.pods import PodRunner
from vcflow.runtime.status import RunStatus

from .conftest import finished, pod, request, sh, wait_until

OUTPUTS = [{"name": ENV_OUTPUTS, "value": "/dev/termination-log"}]


def terminated(status_wire: dict[str, object], index: int = 0) -> dict[str, object]:
    statuses = status_wire["containerStatuses"]
    assert isinstance(statuses, list)
    return statuses[index]["state"]["terminated"]  # type: ignore[no-any-return]


def test_outputs_written_end_in_the_status(runner: PodRunner) -> None:
    script = 'echo {\\"accuracy\\": 0.93} > "$VCFLOW_OUTPUTS"'
    handle = runner.launch(request("out", pod(sh("main", script, env=OUTPUTS))))
    status = finished(runner, handle)
    assert status.phase == "Succeeded"
    assert status.containers[0].message == '{"accuracy": 0.93}\n'
    file = handle.pod_dir / podfs.termination_name("main")
    mode = os.stat(file, follow_symlinks=False).st_mode
    assert stat.S_ISREG(mode) and stat.S_IMODE(mode) == 0o600


def test_the_process_sees_its_local_file(runner: PodRunner, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    env = [*OUTPUTS, {"name": "AFTER", "value": "$(VCFLOW_OUTPUTS)"}]
    script = f'printf "%s\\n%s\\n" "$VCFLOW_OUTPUTS" "$AFTER" > {seen}; [ -f "$VCFLOW_OUTPUTS" ]'
    handle = runner.launch(request("where", pod(sh("main", script, env=env))))
    assert finished(runner, handle).phase == "Succeeded"
    local = str(handle.pod_dir.resolve() / podfs.termination_name("main"))
    assert seen.read_text().split("\n")[:2] == [local, local]


def test_a_message_is_truncated_at_4096_bytes(runner: PodRunner) -> None:
    script = 'head -c 5000 /dev/zero | tr "\\0" x > "$VCFLOW_OUTPUTS"'
    status = finished(runner, runner.launch(request("big", pod(sh("main", script, env=OUTPUTS)))))
    assert status.containers[0].message == "x" * MESSAGE_MAX


def test_invalid_utf8_is_replaced(runner: PodRunner) -> None:
    script = 'printf "ok\\377" > "$VCFLOW_OUTPUTS"'
    status = finished(runner, runner.launch(request("bad", pod(sh("main", script, env=OUTPUTS)))))
    assert status.containers[0].message == "ok\ufffd"


def test_no_env_change_without_the_variable(runner: PodRunner, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    env = [{"name": "OTHER", "value": "/dev/termination-log"}]
    script = f'echo "[${{VCFLOW_OUTPUTS-unset}}] $OTHER" > {seen}'
    handle = runner.launch(request("plain", pod(sh("main", script, env=env))))
    status = finished(runner, handle)
    assert seen.read_text() == "[unset] /dev/termination-log\n"
    assert status.containers[0].message is None  # an empty file gives no message
    assert "message" not in terminated(status.wire)
    assert (handle.pod_dir / podfs.termination_name("main")).exists()  # made all the same


def test_a_failed_container_has_its_message_too(runner: PodRunner) -> None:
    script = 'echo partial > "$VCFLOW_OUTPUTS"; exit 3'
    status = finished(runner, runner.launch(request("fail", pod(sh("main", script, env=OUTPUTS)))))
    c = status.containers[0]
    assert (c.exit_code, c.message) == (3, "partial\n")


def test_restart_keeps_the_last_runs_message(runner: PodRunner, tmp_path: Path) -> None:
    count = tmp_path / "count"
    script = (
        '[ -s "$VCFLOW_OUTPUTS" ] && exit 9; '  # each run starts with an empty file
        f'echo x >> {count}; n=$(wc -l < {count}); echo "{{\\"run\\": $n}}" > "$VCFLOW_OUTPUTS"; '
        '[ "$n" -ge 2 ]'
    )
    spec = pod(sh("main", script, env=OUTPUTS), policy="OnFailure")
    status = finished(runner, runner.launch(request("again", spec)))
    assert status.phase == "Succeeded"
    (c,) = status.wire["containerStatuses"]
    assert c["restartCount"] == 1
    assert c["state"]["terminated"]["message"] == '{"run": 2}\n'
    assert c["lastState"]["terminated"]["message"] == '{"run": 1}\n'
    assert c["lastState"]["terminated"]["exitCode"] == 1


def test_init_containers_get_a_file_of_their_own(runner: PodRunner) -> None:
    init = sh("prep", 'echo "{}" > "$VCFLOW_OUTPUTS"', env=OUTPUTS)
    main = sh("main", '[ ! -s "$VCFLOW_OUTPUTS" ] && echo "{\\"a\\": 1}" > "$VCFLOW_OUTPUTS"')
    main["env"] = OUTPUTS
    status = finished(runner, runner.launch(request("init", pod(main, initContainers=[init]))))
    assert status.phase == "Succeeded"
    assert status.init_containers[0].message == "{}\n"
    assert status.containers[0].message == '{"a": 1}\n'


def test_a_link_in_place_of_the_file_is_replaced(runner: PodRunner, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("secret")
    script = f'ln -sf {victim} "$VCFLOW_OUTPUTS"'  # a link left for the next run to follow
    spec = pod(sh("main", script, env=OUTPUTS), policy="OnFailure")
    spec["containers"][0]["command"][2] += "; [ -f count ] || { touch count; exit 1; }"
    handle = runner.launch(request("link", spec))
    status = finished(runner, handle)
    c = status.wire["containerStatuses"][0]
    assert "message" not in c["state"]["terminated"]  # the link is never read through
    assert "message" not in c["lastState"]["terminated"]
    assert victim.read_text() == "secret"


def test_fallback_to_logs_on_error(runner: PodRunner) -> None:
    lines = "; ".join(f"echo line{i}" for i in range(100))
    failing = sh("bad", f"{lines}; exit 2", terminationMessagePolicy="FallbackToLogsOnError")
    passing = sh("good", "echo fine", terminationMessagePolicy="FallbackToLogsOnError")
    status = finished(runner, runner.launch(request("logs", pod(failing, passing))))
    bad, good = status.containers
    assert bad.message == "".join(f"line{i}\n" for i in range(20, 100))  # its last 80 lines
    assert good.message is None  # exit 0: never the log


def test_a_file_that_cannot_be_made_fails_the_start(runner: PodRunner) -> None:
    script = 'rm -f "$VCFLOW_OUTPUTS"; mkdir "$VCFLOW_OUTPUTS"; exit 1'
    spec = pod(sh("main", script, env=OUTPUTS), policy="OnFailure")
    handle = runner.launch(request("dir", spec))

    def start_failed(status: RunStatus) -> bool:
        container = (status.wire.get("containerStatuses") or [{}])[0]  # (none before it starts)
        last = (container.get("lastState") or {}).get("terminated")
        return bool(last) and last["reason"] == "ContainerCannotRun"

    status = wait_until(runner, handle, start_failed)
    last = status.wire["containerStatuses"][0]["lastState"]["terminated"]
    assert last["exitCode"] == 128
    assert last["message"].startswith("create the termination message file ")
    assert last["message"].endswith(": is a directory")
