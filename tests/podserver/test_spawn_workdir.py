"""A working directory that cannot be made (a file the request brings is in the way of the
default `work/`) fails the container that would run there, as a missing one does, instead
of leaving its pod claimed and never started."""

from __future__ import annotations

from tests.runtime.conftest import finished, pod, request, sh

from vcflow.runtime.launch import PodFile
from vcflow.runtime.pods import PodRunner


def test_a_file_in_the_way_of_the_working_dir_fails_the_container(runner: PodRunner) -> None:
    spec = pod(sh("c", "true"))
    handle = runner.launch(request("blocked", spec, files={"work": PodFile("not a dir")}))
    status = finished(runner, handle, timeout=5)
    c = status.containers[0]
    assert (status.phase, c.exit_code, c.reason) == ("Failed", 128, "ContainerCannotRun")
    assert "not a directory" in (c.message or "")
