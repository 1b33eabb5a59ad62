"""Retention: delete expired commit-log files, then the consume-queue and index files that only point into them.

Files: none of its own; it removes ``commitlog/<offset>`` segments and the ``consumequeue/`` and ``index/`` files
that only point into them. A commit-log file expires when its last modification is older than ``fileReservedTime``
hours. Expired files are deleted when the clock's local hour is one of ``deleteWhen`` (``"04"`` or ``"03;04"``), or
at any hour when disk use of the store's volume passes ``diskMaxUsedSpaceRatio`` percent — then the oldest files go
even if not expired (RocketMQ's forced clean). The file being written to is never deleted. At most
``delete_files_batch_max`` files go per pass. Reads of removed ranges then give OFFSET_TOO_SMALL /
MESSAGE_WAS_REMOVING (see ``message_store``). The clock is the store's (injectable for tests).
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable

from broker.store.commitlog import CommitLog

_log = logging.getLogger("rocketq.store.retention")


def parse_delete_when(spec: str) -> set[int]:
    hours: set[int] = set()
    for part in spec.replace(",", ";").split(";"):
        part = part.strip()
        if part.isdigit() and 0 <= int(part) <= 23:
            hours.add(int(part))
    return hours


def disk_ratio(path: str) -> float:
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return 0.0
    return 100.0 * usage.used / usage.total if usage.total else 0.0


def expired_commit_log_files(
    commitlog: CommitLog,
    *,
    now: float,
    reserved_hours: float,
    delete_hours: set[int],
    max_ratio: float,
    ratio: Callable[[], float],
    batch_max: int,
    dispatched: int | None = None,
) -> int:
    """How many files at the head of the commit log to delete now. Never the active file, nor (when
    ``dispatched`` is given) one not wholly dispatched to the consume queues yet."""
    files = commitlog.queue.files[:-1]  # never the active file
    if not files:
        return 0
    forced = ratio() > max_ratio
    if not forced and time.localtime(now).tm_hour not in delete_hours:
        return 0
    n = 0
    for mf in files:
        if n >= batch_max:
            break
        if dispatched is not None and mf.start + mf.size > dispatched:
            break
        try:
            mtime = os.path.getmtime(mf.path)
        except OSError:
            mtime = 0.0
        if now - mtime >= reserved_hours * 3600 or forced:
            n += 1
            if forced:
                break  # one file at a time when forced: re-check the ratio next pass
        else:
            break
    return n
