"""The log levels (`serving.logs`): uvicorn's six names, `trace` logging at DEBUG."""

from __future__ import annotations

import pytest

from vcflow.serving import Refused, logs


def test_the_levels() -> None:
    assert logs.LEVELS == ("critical", "error", "warning", "info", "debug", "trace")
    assert [logs.python_level(level) for level in logs.LEVELS] == [
        "CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "DEBUG",
    ]  # fmt: skip


def test_an_unknown_level_is_refused() -> None:
    logs.check_level("debug")
    with pytest.raises(Refused) as refused:
        logs.check_level("loud")
    assert str(refused.value) == (
        "--log-level 'loud': one of critical, error, warning, info, debug, trace"
    )
