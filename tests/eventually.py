"""The suite's one poll-until helper: ``eventually`` waits on a bounded deadline for a condition that a server
reaches asynchronously (a registration, a flush, a rebalance), instead of sleeping a fixed time.

    await eventually(lambda: broker.offsets.query("G", "T", 0) == 3, what="offset 3 committed")
    route = await eventually(lambda: fetch_route(topic), timeout=5)   # async checks too; returns the truthy value
    eventually_sync(lambda: master_status()["aliveworkers"] == 2, timeout=60)  # from code with no event loop
    await eventually(lambda: len(got) >= 3, what=lambda: f"3 messages, got {len(got)}")  # said when it times out
    await eventually(lambda: admin.topic_route(t), ignoring=(RemotingError,))  # these errors mean "not yet"
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

What = str | Callable[[], str]


def _timed_out(timeout: float, what: What) -> AssertionError:
    return AssertionError(f"timed out after {timeout}s waiting for {what() if callable(what) else what}")


async def eventually(
    check: Callable[[], Any | Awaitable[Any]],
    timeout: float = 10.0,
    what: What = "condition",
    step: float = 0.02,
    ignoring: tuple[type[BaseException], ...] = (),
) -> Any:
    """Call ``check()`` (sync or async) until it returns something truthy and return that; after ``timeout``
    seconds fail the test with an ``AssertionError`` naming ``what`` (a text, or a function giving one then). An
    exception of a type in ``ignoring`` raised by ``check`` counts as a falsy answer."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            value = check()
            if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
                value = await value
        except ignoring:
            value = None
        if value:
            return value
        if loop.time() > deadline:
            raise _timed_out(timeout, what)
        await asyncio.sleep(step)


def eventually_sync(
    check: Callable[[], Any],
    timeout: float = 10.0,
    what: What = "condition",
    step: float = 0.1,
    ignoring: tuple[type[BaseException], ...] = (),
) -> Any:
    """``eventually`` for plain (non-async) code, e.g. helpers that watch other processes: call ``check()`` until it
    returns something truthy and return that; after ``timeout`` seconds raise ``AssertionError`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
        except ignoring:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise _timed_out(timeout, what)
        time.sleep(step)
