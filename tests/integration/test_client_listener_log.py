"""The SDK logs a listener's exception with its traceback (not only ``repr(exc)``), through a real push consumer."""

from __future__ import annotations

import logging

import pytest

from client import ConsumeResult, Message, Producer, PushConsumer
from protocol.message_ext import MessageExt
from tests.integration.client_support import Cluster, until


def _deep_in_user_code(body: bytes) -> None:
    raise RuntimeError(f"listener failed on {body!r}")


async def test_listener_exception_is_logged_with_traceback(cluster: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    await cluster.create_topic("LogT", 1)
    calls: list[int] = []

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        calls.append(len(msgs))
        if len(calls) == 1:
            _deep_in_user_code(msgs[0].body)
        return ConsumeResult.SUCCESS

    consumer = PushConsumer("CG_log", namesrv_addr=cluster.ns_addr)
    consumer.subscribe("LogT", "*", listener)
    with caplog.at_level(logging.WARNING, logger="rocketq.client"):
        async with consumer, Producer("PG_log", namesrv_addr=cluster.ns_addr) as p:
            await p.send(Message("LogT", b"payload"))
            await until(lambda: len(calls) >= 2, timeout=30, what="the retried delivery")
    (text,) = [r.getMessage() for r in caplog.records if "listener raised" in r.getMessage()]
    assert "Traceback (most recent call last)" in text
    assert "_deep_in_user_code" in text and "RuntimeError: listener failed on b'payload'" in text
