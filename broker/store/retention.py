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

``StoreRetention`` (a mixin of ``MessageStore``) runs the passes: the periodic one, mqadmin's
deleteExpiredCommitLog and cleanExpiredCQ.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from broker.store.commitlog import CommitLog
from broker.store.config import StoreConfig
from broker.store.consume_queue import ConsumeQueue
from broker.store.dispatcher import Dispatcher
from broker.store.index import IndexService

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


class StoreRetention:
    """Retention passes over the state ``MessageStore`` owns."""

    _config: StoreConfig
    _clock: Callable[[], float]
    _queues: dict[tuple[str, int], ConsumeQueue]
    _cl_executor: concurrent.futures.ThreadPoolExecutor
    commitlog: CommitLog
    dispatcher: Dispatcher
    index: IndexService | None
    forced_clean: ForcedCleanStats
    consumed_offset: Callable[[str, int], int | None] | None

    def clean_expired(self, *, ratio: Callable[[], float] | None = None) -> int:
        """One retention pass, deleting the files at once; returns the number of commit-log files deleted."""
        n, doomed = self._expire(ratio)
        for destroy in doomed:
            destroy()
        return n

    def delete_expired_now(self) -> int:
        """J ``executeDeleteFilesManually`` (mqadmin deleteExpiredCommitLog): one retention pass at any hour, not only
        at ``deleteWhen``; still only files older than ``fileReservedTime`` (or over the disk ratio)."""
        n, doomed = self._expire(None, any_hour=True)
        for destroy in doomed:
            destroy()
        return n

    def clean_expired_consume_queues(self) -> int:
        """J ``cleanExpiredConsumerQueue`` (mqadmin cleanExpiredCQ): drop consume-queue files whose units all point
        below the commit log's min offset; returns how many files were removed."""
        if self.dispatcher.pending:
            self.dispatcher.drain()
        cl_min = self.commitlog.min_offset
        n = 0
        for cq in self._queues.values():
            for mf in cq.correct_min(cl_min):
                mf.destroy()
                n += 1
        return n

    def _expire(
        self, ratio: Callable[[], float] | None, *, any_hour: bool = False
    ) -> tuple[int, list[Callable[[], None]]]:
        """Pick and detach expired files (on the loop); returns how many commit-log files, and the destroy calls."""
        cfg = self._config
        if self.dispatcher.pending:
            self.dispatcher.drain()
        n, forced = expired_commit_log_files(
            self.commitlog,
            now=self._clock(),
            reserved_hours=cfg.file_reserved_time_hours,
            delete_hours=set(range(24)) if any_hour else parse_delete_when(cfg.delete_when),
            max_ratio=cfg.disk_max_used_space_ratio,
            ratio=ratio or (lambda: disk_ratio(cfg.store_path_root_dir)),
            batch_max=cfg.delete_files_batch_max,
            dispatched=self.dispatcher.dispatched_offset,
            forcibly=cfg.clean_file_forcibly_enable,
        )
        if n == 0:
            return 0, []
        gone = self.commitlog.queue.delete_first(n, destroy=False)
        doomed: list[Callable[[], None]] = []
        for mf in gone:
            if not forced:
                _log.info("commit log file deleted by retention: %s", mf.path)
            doomed.append(mf.destroy)
        cl_min = self.commitlog.min_offset
        before = {key: cq.min_offset for key, cq in self._queues.items()} if forced else {}
        for cq in self._queues.values():
            doomed.extend(mf.destroy for mf in cq.correct_min(cl_min))
        if forced:
            moved = [(t, q, before[(t, q)], cq.min_offset) for (t, q), cq in self._queues.items() if (t, q) in before]
            forced_clean_report(moved, self.consumed_offset, self.forced_clean, [mf.path for mf in gone])
        if self.index is not None:
            doomed.extend(f.destroy for f in self.index.delete_before(cl_min))
        return n, doomed

    async def _retention_loop(self) -> None:
        loop = asyncio.get_running_loop()
        interval = self._config.clean_resource_interval_ms / 1000
        while True:
            await asyncio.sleep(interval)
            try:
                _n, doomed = self._expire(None)
                if doomed:
                    # unlink + munmap of big files off the loop; the commit-log executor also serialises them with
                    # syncs of the same files
                    await loop.run_in_executor(self._cl_executor, _run_all, doomed)
            except Exception:
                _log.exception("retention pass failed")


def _run_all(calls: list[Callable[[], None]]) -> None:
    for call in calls:
        try:
            call()
        except OSError as exc:
            _log.warning("deleting an expired file failed: %s", exc)
