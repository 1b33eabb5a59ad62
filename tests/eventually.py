"""The suite's one poll-until helper: ``eventually`` waits on a bounded deadline for a condition that a server
reaches asynchronously (a registration, a flush, a rebalance), instead of sleeping a fixed time.

    await eventually(lambda: broker.offsets.query("G", "T", 0) == 3, what="offset 3 committed")
    route = await eventually(lambda: fetch_route(topic), timeout=5)   # async checks too; returns the truthy value
    eventually_sync(lambda: master_status()["aliveworkers"] == 2, timeout=60)  # from code with no event loop
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any


async def eventually(
    check: Callable[[], Any | Awaitable[Any]],
    timeout: float = 10.0,
    what: str = "condition",
    step: float = 0.02,
) -> Any:
    """Call ``check()`` (sync or async) until it returns something truthy and return that; after ``timeout``
    seconds fail the test with an ``AssertionError`` naming ``what``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(step)


def eventually_sync(check: Callable[[], Any], timeout: float = 10.0, what: str = "condition", step: float = 0.1) -> Any:
    """``eventually`` for plain (non-async) code, e.g. helpers that watch other processes: call ``check()`` until it
    returns something truthy and return that; after ``timeout`` seconds raise ``AssertionError`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(step)
