"""The SDK logs through standard logging: silent on stdout, rendered as ``event key=value`` when enabled."""

from __future__ import annotations

import logging

import pytest

from client._log import get_logger


def test_nothing_on_stdout_and_disabled_levels_are_dropped(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="rocketq.client")
    log = get_logger("rocketq.client.test")
    log.debug("not shown", n=1)
    log.info("not shown either")
    log.warning("flow control", queue=3, why="count")
    assert capsys.readouterr().out == ""
    assert [r.getMessage() for r in caplog.records] == ["flow control queue=3 why='count'"]
    assert caplog.records[0].name == "rocketq.client.test"


def test_exception_traceback_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="rocketq.client")
    log = get_logger("rocketq.client.test")
    try:
        raise ValueError("bad")
    except ValueError as exc:
        log.exception("listener failed", group="g")
        log.error("send back failed", exc_info=exc)
    first, second = caplog.records
    assert first.getMessage() == "listener failed group='g'" and first.exc_info is not None
    assert second.getMessage().startswith("send back failed\nTraceback") and "ValueError: bad" in second.getMessage()
