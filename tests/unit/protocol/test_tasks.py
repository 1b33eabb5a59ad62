"""``runtime.tasks.stop_tasks``: the tasks end cancelled, their other failures are raised or reported, and a
cancellation aimed at the caller while it waits is never swallowed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from runtime.tasks import ignore_failure, stop_tasks


async def _forever() -> None:
    await asyncio.Event().wait()


async def _started(coro_fn: Callable[[], Awaitable[None]], name: str | None = None) -> asyncio.Task[None]:
    """A task that is already inside ``coro_fn`` (so a cancel lands in its body, not before it runs)."""
    running = asyncio.Event()

    async def body() -> None:
        running.set()
        await coro_fn()

    task = asyncio.create_task(body(), name=name)
    await running.wait()
    return task


async def _fails_on_cancel() -> None:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        raise ValueError("cleanup failed") from None


async def test_cancels_and_waits_for_every_task_and_skips_none() -> None:
    a = await _started(_forever)
    b = await _started(_forever)
    await stop_tasks(a, None, b)
    assert a.cancelled() and b.cancelled()


async def test_no_tasks_is_a_no_op() -> None:
    await stop_tasks()
    await stop_tasks(None)


async def test_another_failure_is_raised_after_all_tasks_are_done() -> None:
    bad = await _started(_fails_on_cancel)
    other = await _started(_forever)
    with pytest.raises(ValueError, match="cleanup failed"):
        await stop_tasks(bad, other)
    assert other.cancelled()


async def test_on_error_receives_the_failure_instead() -> None:
    seen: list[tuple[str, str]] = []

    def record(task: asyncio.Task[Any], exc: BaseException) -> None:
        seen.append((task.get_name(), str(exc)))

    bad = await _started(_fails_on_cancel, name="bad")
    await stop_tasks(bad, on_error=record)
    assert seen == [("bad", "cleanup failed")]
    bad2 = await _started(_fails_on_cancel)
    await stop_tasks(bad2, on_error=ignore_failure)
    assert bad2.done() and not bad2.cancelled()


async def test_the_callers_own_cancellation_propagates() -> None:
    release = asyncio.Event()
    stopping = asyncio.Event()

    async def slow_to_stop() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            stopping.set()
            await release.wait()  # a task whose shutdown takes a while
            raise

    worker = await _started(slow_to_stop)
    after_stop: list[str] = []

    async def owner() -> None:
        await stop_tasks(worker)
        after_stop.append("kept running")

    owner_task = asyncio.create_task(owner())
    await stopping.wait()
    owner_task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await owner_task
    assert after_stop == []
    release.set()
    await asyncio.wait([worker])
    assert worker.cancelled()
