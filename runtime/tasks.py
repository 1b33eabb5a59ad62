"""The one way every rocketq service stops its background tasks: ``stop_tasks``. Standard library only, so the
store (which may import no other module of ours but the record codec) uses it too.

Why not ``task.cancel(); with suppress(CancelledError): await task``: that also swallows a cancellation aimed at the
*caller* while it waits, which leaves the caller running after its owner cancelled it (a close that never finishes).
``asyncio.wait`` never raises the awaited tasks' CancelledError, so here only the caller's own cancellation
propagates; the tasks' own cancellation is their expected end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

OnError = Callable[["asyncio.Task[Any]", BaseException], None]


async def stop_tasks(*tasks: asyncio.Task[Any] | None, on_error: OnError | None = None) -> None:
    """Cancel ``tasks`` (None is skipped) and wait until every one has finished. A task that ended with another
    failure is passed to ``on_error``; without one, the first such failure is raised once all tasks are done. A
    cancellation of the caller while it waits propagates (the tasks are still cancelled)."""
    todo = [t for t in tasks if t is not None]
    if not todo:
        return
    for t in todo:
        t.cancel()
    await asyncio.wait(todo)
    for t in todo:
        if t.cancelled():
            continue
        exc = t.exception()
        if exc is None:
            continue
        if on_error is None:
            raise exc
        on_error(t, exc)


def ignore_failure(task: asyncio.Task[Any], exc: BaseException) -> None:
    """``on_error`` for tasks whose failure has already been reported where it happened (connection handlers)."""
