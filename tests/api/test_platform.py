"""`Platform`: what a local run and a cluster each let vcflow do."""

from __future__ import annotations

from vcflow.api.platform import Platform


def test_a_local_run_runs_the_pods_here_and_reaches_them_on_the_host() -> None:
    assert Platform.LOCAL.runs_pods_here
    assert not Platform.LOCAL.reaches_pod_ips


def test_on_a_cluster_each_pod_is_reached_at_its_own_ip() -> None:
    assert not Platform.CLUSTER.runs_pods_here
    assert Platform.CLUSTER.reaches_pod_ips


def test_the_two_say_opposite_things() -> None:
    for platform in Platform:
        assert platform.runs_pods_here is not platform.reaches_pod_ips
