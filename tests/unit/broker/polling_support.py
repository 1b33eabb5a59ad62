"""``hold``: await one held pull of ``LongPollingService.park`` (which the pull handler calls with a callback) as a
coroutine, for tests that drive the service directly."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from broker.services.long_polling import LongPollingService, Wake
from broker.store.request import GetRequest


async def hold(
    svc: LongPollingService,
    request: GetRequest,
    timeout_s: float,
    max_offset_now: Callable[[str, int], int] | None = None,
) -> Wake:
    """Park ``request`` and return why it woke; a cancelled wait leaves nothing held."""
    fut: asyncio.Future[Wake] = asyncio.get_running_loop().create_future()

    def woken(why: Wake) -> None:
        if not fut.done():
            fut.set_result(why)

    entry = svc.park(request, timeout_s, woken, max_offset_now)
    try:
        return await fut
    finally:
        if entry is not None:
            svc.drop(entry)
