"""Retention: delete expired commit-log files, then the consume-queue and index files that only point into them.

Files: none of its own; it removes ``commitlog/<offset>`` segments and the ``consumequeue/`` and ``index/`` files
that only point into them. A commit-log file expires when its last modification is older than ``fileReservedTime``
hours. Expired files are deleted when the clock's local hour is one of ``deleteWhen`` (``"04"`` or ``"03;04"``), or
at any hour when disk use of the store's volume passes ``diskMaxUsedSpaceRatio`` percent — then, with
``cleanFileForciblyEnable`` (default true, J's key), the oldest files go even if not expired (RocketMQ's forced
clean; without it only expired files go, at any hour). The file being written to is never deleted.

A forced clean deletes messages consumers may not have read: ``forced_clean_report`` counts, per topic, the messages
removed and those among them at or past the slowest consumer group's committed offset (``consumed``; a queue no
group has committed counts wholly), logs them at WARNING, and adds them to ``ForcedCleanStats`` (the broker exports
``rocketq_store_forced_clean_messages_total{topic,consumed}``). At most
``delete_files_batch_max`` files go per pass. Reads of removed ranges then give OFFSET_TOO_SMALL /
MESSAGE_WAS_REMOVING (see ``message_store``). The clock is the store's (injectable for tests).
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

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
    forcibly: bool = True,
) -> tuple[int, bool]:
    """How many files at the head of the commit log to delete now, and whether any is unexpired (a forced clean).
    Never the active file, nor (when ``dispatched`` is given) one not wholly dispatched to the consume queues yet."""
    files = commitlog.queue.files[:-1]  # never the active file
    if not files:
        return 0, False
    full = ratio() > max_ratio
    forced = full and forcibly
    if not full and time.localtime(now).tm_hour not in delete_hours:
        return 0, False
    n = 0
    unexpired = False
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
            unexpired = unexpired or now - mtime < reserved_hours * 3600
            if forced:
                break  # one file at a time when forced: re-check the ratio next pass
        else:
            break
    return n, unexpired


@dataclass(slots=True)
class ForcedCleanStats:
    """Messages deleted by forced cleans since start, per topic: all of them, and those not yet consumed."""

    removed: dict[str, int] = field(default_factory=dict)
    unconsumed: dict[str, int] = field(default_factory=dict)
    passes: int = 0


def forced_clean_report(
    moved: Iterable[tuple[str, int, int, int]],
    consumed: Callable[[str, int], int | None] | None,
    stats: ForcedCleanStats,
    files: list[str],
) -> None:
    """Account for one forced clean: ``moved`` holds (topic, queue id, min offset before, min offset after)."""
    removed: dict[str, int] = {}
    unconsumed: dict[str, int] = {}
    for topic, qid, before, after in moved:
        if after <= before:
            continue
        removed[topic] = removed.get(topic, 0) + after - before
        done = consumed(topic, qid) if consumed is not None else None
        lost = after - max(before, done) if done is not None else after - before
        if lost > 0:
            unconsumed[topic] = unconsumed.get(topic, 0) + lost
    stats.passes += 1
    for topic, n in removed.items():
        stats.removed[topic] = stats.removed.get(topic, 0) + n
    for topic, n in unconsumed.items():
        stats.unconsumed[topic] = stats.unconsumed.get(topic, 0) + n
    _log.warning(
        "disk over diskMaxUsedSpaceRatio: forced clean deleted unexpired commit-log file(s) %s; messages removed per "
        "topic %s, of which not yet consumed %s",
        ", ".join(files),
        removed,
        unconsumed,
    )
