"""A handler whose first step ran inline and then suspended continues in a Task (``ResumedHandler``) exactly as if the
Task had run it from its start: woken, it runs in that Task (asyncio.timeout works); cancelled, even before the
Task's first step, it sees the CancelledError at its await and its finally runs."""

from __future__ import annotations

import asyncio

import pytest

from protocol.remoting.resumed import ResumedHandler


async def handler(ev: asyncio.Event, log: list[str]) -> str:
    log.append("start")
    try:
        await ev.wait()
        async with asyncio.timeout(5):  # needs a current Task
            await asyncio.sleep(0)
        task = asyncio.current_task()
        log.append(type(task).__name__ if task is not None else "no task")
        return "done"
    except asyncio.CancelledError:
        log.append("cancelled")
        raise
    finally:
        log.append("finally")


def start(log: list[str]) -> tuple[asyncio.Event, asyncio.Task[str]]:
    ev = asyncio.Event()
    coro = handler(ev, log)
    first = coro.send(None)  # the inline first step: suspends on the event's future
    assert log == ["start"] and asyncio.isfuture(first)
    return ev, asyncio.get_running_loop().create_task(ResumedHandler(coro, first))


async def test_woken_handler_finishes_in_its_task() -> None:
    log: list[str] = []
    ev, task = start(log)
    assert "handler" in repr(task)
    await asyncio.sleep(0)
    ev.set()
    assert await task == "done"
    assert log == ["start", "Task", "finally"]


@pytest.mark.parametrize("before_first_step", [True, False])
async def test_cancel_reaches_the_handler(before_first_step: bool) -> None:
    log: list[str] = []
    _ev, task = start(log)
    if not before_first_step:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert log == ["start", "cancelled", "finally"]
