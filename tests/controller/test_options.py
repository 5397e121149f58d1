"""`ControllerOptions`: one value the manager hands to its flow controller whole."""

from __future__ import annotations

import dataclasses

import pytest

from vcflow.api.platform import Platform
from vcflow.controller.manager import Manager
from vcflow.controller.observer import Observer
from vcflow.controller.options import STATUS_INTERVAL, ControllerOptions
from vcflow.controller.prober import SocketProber, Unreachable
from vcflow.store import MemoryStore


def test_the_defaults_are_a_local_run_that_creates_every_ready_vcjob() -> None:
    options = ControllerOptions()
    assert options.create_batch is None
    assert options.create_workers == 1
    assert options.platform is Platform.LOCAL
    assert options.status_interval == STATUS_INTERVAL


def test_options_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ControllerOptions().create_batch = 3  # type: ignore[misc]


def test_the_flow_controller_gets_the_managers_options_and_observer() -> None:
    prober = Unreachable()
    options = ControllerOptions(create_batch=2, prober=prober, platform=Platform.CLUSTER)
    manager = Manager(MemoryStore(), options=options)
    assert manager.flows.options.create_batch == 2
    assert manager.flows.options.platform is Platform.CLUSTER
    assert manager.flows.prober is prober
    assert manager.flows.observer is manager.observer  # (a new one, shared)


def test_without_options_real_sockets_probe_and_the_given_observer_is_told() -> None:
    assert isinstance(Manager(MemoryStore()).flows.prober, SocketProber)
    seen = Observer()
    assert Manager(MemoryStore(), options=ControllerOptions(observer=seen)).observer is seen
