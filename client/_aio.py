"""How the SDK reports a background task that failed while it was being stopped: ``log_stop_failure``, the
``on_error`` the SDK passes to ``protocol.tasks.stop_tasks`` (a close logs such failures instead of raising them).
"""

from __future__ import annotations

import asyncio
from typing import Any

from client._log import get_logger

_log = get_logger("rocketq.client")


def log_stop_failure(task: asyncio.Task[Any], exc: BaseException) -> None:
    """Log a task that ended with a failure other than its cancellation while the SDK stopped it."""
    _log.warning("task failed while stopping", task=task.get_name(), error=repr(exc))
