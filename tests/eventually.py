"""The suite's one poll-until helper: ``eventually`` waits on a bounded deadline for a condition that a server
reaches asynchronously (a registration, a flush, a rebalance), instead of sleeping a fixed time.

    await eventually(lambda: broker.offsets.query("G", "T", 0) == 3, what="offset 3 committed")
    route = await eventually(lambda: fetch_route(topic), timeout=5)   # async checks too; returns the truthy value
"""

from __future__ import annotations

import asyncio
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
