"""The SDK's lifecycle plumbing: ``StartClose`` (``async with`` for a client with ``start``/``close``), background
timers (``every``: a step repeated on a period that survives a failed round) and ``log_stop_failure``, the ``on_error`` the SDK passes to ``runtime.tasks.stop_tasks`` (a
close logs such failures instead of raising them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Self

from client._log import get_logger

_log = get_logger("rocketq.client")


def log_stop_failure(task: asyncio.Task[Any], exc: BaseException) -> None:
    """Log a task that ended with a failure other than its cancellation while the SDK stopped it."""
    _log.warning("task failed while stopping", task=task.get_name(), error=repr(exc))


async def every(interval: float, step: Callable[[], Awaitable[None]], failed: str, log: Any = _log) -> None:
    """Await ``step()`` every ``interval`` seconds, the first time one interval from now, until cancelled; a round
    that fails is logged on ``log`` as ``failed`` and the timer goes on."""
    while True:
        await asyncio.sleep(interval)
        try:
            await step()
        except Exception as exc:  # a timer must survive a bad round
            log.warning(failed, error=repr(exc))


class StartClose:
    """``async with client:`` = ``await client.start()`` … ``await client.close()`` (the producer and consumers)."""

    async def start(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
