"""Small asyncio helpers the SDK's services share.

``cancel_and_wait`` exists because the obvious ``task.cancel(); with suppress(CancelledError): await task`` also
swallows a cancellation aimed at the *caller* while it waits, which leaves the caller running after its owner
cancelled it (a close that never finishes). ``asyncio.wait`` never raises the awaited task's CancelledError, so
only the caller's own cancellation propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from client._log import get_logger

_log = get_logger("rocketq.client")


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any] | None]) -> None:
    """Cancel ``tasks`` and wait until they are done; their failures are logged, not raised."""
    todo = [t for t in tasks if t is not None]
    for t in todo:
        t.cancel()
    if not todo:
        return
    await asyncio.wait(todo)
    for t in todo:
        if not t.cancelled() and t.exception() is not None:
            _log.warning("task failed while stopping", task=t.get_name(), error=repr(t.exception()))
