"""MessageStore: the façade the broker talks to — put, get, offsets, lookups, lifecycle.

Everything here runs on the event loop except ``fdatasync`` and file deletion, which go to two dedicated
single-thread executors (commit log; consume queues + index + checkpoint). The put path (``put.py``) encodes each
record once with its final offsets and appends a whole batch with one write; the dispatcher (``dispatcher.py``, a
loop callback per burst of puts) builds consume queues and the index behind it and wakes the arrival listeners;
with SYNC_FLUSH a put returns only after a group-commit fsync covering it (``flush.py``; on its flush thread, or on
the loop with ``group_commit_inline``).
The get path and the lookups (``reads.py``, a mixin of this class) read consume-queue units and slice records
straight out of the mapped commit log; they first dispatch whatever is still queued, so a get always sees every put
that returned before it.

Replication (driven by ``broker.ha``) is the mixin ``replication.py``: raw log chunks out, replicated bytes in,
puts refused on a slave, a SYNC_MASTER's replica wait next to the group-commit flush. Retention passes are the
mixin ``StoreRetention`` of ``retention.py``.

On-disk layout under ``store_path_root_dir``: ``commitlog/``, ``consumequeue/<topic>/<qid>/``, ``index/``,
``checkpoint``, ``abort``, ``lock``, ``crc_since`` (``sealed_ranges``) and ``quarantine/`` (each module documents its own format).

Damage is never fatal: recovery quarantines damaged records and repairs derived files (``recovery.py``,
``cq_repair.py``); reads check records recovery did not verify and skip damaged ones with a log line; what was
found is in ``integrity`` (an ``IntegrityReport``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import fcntl
import logging
import math
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from broker.store.checkpoint import (
    Checkpoint,
    create_abort_marker,
    read_checkpoint,
    remove_abort_marker,
)
from broker.store.commitlog import CommitLog
from broker.store.config import StoreConfig
from broker.store.consume_queue import ConsumeQueue
from broker.store.cq_marks import read_marks
from broker.store.cq_rebuild import BackgroundRebuild
from broker.store.cq_repair import check_units
from broker.store.dispatcher import ArrivalListener, Dispatcher, Waiting
from broker.store.errors import StoreLockedError
from broker.store.flush import GroupCommit, IntervalFlusher, timed_flush
from broker.store.index import IndexService
from broker.store.integrity import IntegrityReport
from broker.store.logics_flush import LogicsFlush
from broker.store.put import Appender
from broker.store.quarantine import Quarantine
from broker.store.reads import StoreReads
from broker.store.recovery import recover
from broker.store.replica import ReplicaParser
from broker.store.replication import ReplicaWait, StoreReplication
from broker.store.request import BatchPutRequest, PutRequest
from broker.store.results import (
    PutMessageResult,
    PutMessageStatus,
)
from broker.store.retention import ForcedCleanStats, StoreRetention, disk_ratio
from broker.store.scrub import Scrubber
from broker.store.sealed_ranges import SealedRanges, first_open
from broker.store.stats import StoreStats
from broker.store.truncate import truncate_log
from broker.store.warmer import SegmentWarmer
from protocol.message_properties import encode_properties
from runtime.tasks import stop_tasks

_log = logging.getLogger("rocketq.store")


class MessageStore(StoreReads, StoreReplication, StoreRetention):
    def __init__(
        self,
        config: StoreConfig,
        *,
        clock: Callable[[], float] = time.time,
        free_space: Callable[[], int] | None = None,
    ) -> None:
        self._clock = clock
        self.commitlog = CommitLog(config.commit_log_dir, config.mapped_file_size_commit_log)
        self._queues: dict[tuple[str, int], ConsumeQueue] = {}
        self._queue_offsets: dict[tuple[str, int], int] = {}
        self.index = (
            IndexService(config.index_dir, config.max_hash_slot_num, config.max_index_num)
            if config.message_index_enable
            else None
        )
        self.dispatcher = Dispatcher(self._queues, self._cq, self.index)
        self._appender = Appender(
            self.commitlog,
            self.dispatcher,
            self._queue_offsets,
            clock,
            store_host=config.store_host,
            max_message_size=config.max_message_size,
            free_space=free_space,
            seal=config.seal_records,
            warning_ratio=config.disk_space_warning_level_ratio,
        )
        self._config = config
        self._cl_executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="store-flush-commitlog")
        self._logic_executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="store-flush-logics")
        self._group_commit: GroupCommit | None = None
        # whether a waiting put waits for anything (a SYNC_FLUSH fsync, a SYNC_MASTER replica ack); when not,
        # ``append`` answers what ``put_message(s)`` would, without a suspension (kept by ``_durability_changed``)
        self.waits_for_durability = False
        # the SYNC_FLUSH group commit when it is all a waiting put waits for (no replica wait): a handler may then
        # put with ``wait=False`` and register a callback with ``request_callback`` instead of awaiting the put
        self.sync_flush_only: GroupCommit | None = None
        self._warmer: SegmentWarmer | None = None
        self._flushers: list[IntervalFlusher] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._lock_fd: int | None = None
        self._closed = True
        self.last_exit_ok = True
        self.get_count = 0
        self.boot_timestamp = int(clock() * 1000)
        self._checkpoint = Checkpoint()
        self._logics: LogicsFlush | None = None
        self._rebuild: BackgroundRebuild | None = None
        self.integrity = IntegrityReport()
        self._quarantine = Quarantine(config.store_path_root_dir, self.integrity)
        # records below this offset were not verified by this run's recovery: reads check them (and skip damage)
        self._trusted_from = 0
        self._seals = SealedRanges(config.store_path_root_dir, 1 << 62, ())  # LENIENT everywhere until open
        self._bad_logged: set[int] = set()
        self.stats = StoreStats()  # group-commit size, fsync latency (read by the broker's metrics)
        self.puts_refused: str | None = None
        # controller mode's write lease (``broker.ha.replicas``): past this ``time.monotonic()`` value puts are
        # refused with ``lease_remark`` — checked on each put, so a master paused past its lease refuses at once
        self.write_deadline = math.inf
        self.lease_remark = ""
        # forced cleans (retention.forced_clean_report): what they deleted, and the slowest group's committed offset
        # per (topic, queue) the broker supplies to tell consumed from unconsumed
        self.forced_clean = ForcedCleanStats()
        self.consumed_offset: Callable[[str, int], int | None] | None = None
        self._replica_wait: ReplicaWait | None = None
        self._replica_parser: ReplicaParser | None = None

    @property
    def config(self) -> StoreConfig:
        return self._config

    @config.setter
    def config(self, config: StoreConfig) -> None:
        """Replace the settings that may change at run time (store host once the port is known, retention, max
        message size). File sizes, paths and the flush mode are fixed once the store is open."""
        self._config = config
        self._appender.configure(store_host=config.store_host, max_message_size=config.max_message_size)

    @property
    def put_count(self) -> int:
        return self._appender.put_count

    @property
    def put_bytes(self) -> int:
        return self._appender.put_bytes

    # -- lifecycle -------------------------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        config: StoreConfig,
        *,
        clock: Callable[[], float] = time.time,
        free_space: Callable[[], int] | None = None,
    ) -> MessageStore:
        """Lock the directory, load every file and recover. Synchronous; call ``start()`` on the loop after.
        ``free_space`` (bytes free on the commit log's volume) is probed to resume puts after a full disk."""
        store = cls(config, clock=clock, free_space=free_space)
        try:
            store._load()
        except BaseException:
            store._release()
            raise
        return store

    def _load(self) -> None:
        cfg = self._config
        os.makedirs(cfg.store_path_root_dir, exist_ok=True)
        self._lock_fd = os.open(os.path.join(cfg.store_path_root_dir, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise StoreLockedError(f"{cfg.store_path_root_dir} is in use by another process") from None
        root = cfg.store_path_root_dir
        self.last_exit_ok = not create_abort_marker(root)
        cp_path = os.path.join(root, "checkpoint")
        if not os.path.exists(cp_path) and os.path.isdir(cfg.commit_log_dir) and os.listdir(cfg.commit_log_dir):
            self.integrity.repaired("checkpoint missing: the whole commit log is scanned and dispatched again")
        self._checkpoint = read_checkpoint(cp_path)
        report = self.integrity
        self.commitlog.queue.load(lambda line: report.repaired("%s", line, files=1))
        damaged = self._load_queues()
        index_from = None
        if self.index is not None:
            index_from = self.index.load(lambda line: report.repaired("%s", line, files=1))
        seals = SealedRanges.load(root)
        background: list[tuple[ConsumeQueue, int]] = []
        end, self._trusted_from = recover(
            self.commitlog,
            self._queues.values(),
            self.index,
            self.dispatcher,
            self._checkpoint,
            clean=self.last_exit_ok,
            check_crc=cfg.check_crc_on_recover,
            seals=seals,
            quarantine=self._quarantine,
            damaged_queues=damaged,
            index_from=index_from,
            marks=read_marks(root),
            background=background,
        )
        if background:
            self._rebuild = BackgroundRebuild(
                self.commitlog, [cq for cq, _ in background], background[0][1], report, self._rebuilt
            )
        if cfg.seal_records:  # from here on this store appends sealed records itself
            if seals is None:
                seals = first_open(root, end)
            seals.open_range(end, self.commitlog.min_offset)
        if seals is not None:
            self._seals = seals
        for cq in self._queues.values():
            check_units(self.commitlog, cq, end, report)
        if report.repairs:
            _log.warning(
                "store opened with repairs: %d quarantined records, %d repaired files, %d repaired units, "
                "%d rebuilt queues, %d torn-tail bytes cut (mqadmin checkStore shows them)",
                report.quarantined_records, report.repaired_files, report.repaired_units, report.rebuilt_queues,
                report.truncated_tail_bytes,
            )  # fmt: skip
        # RocketMQ's correctMinOffset at start: units pointing into commit-log files deleted by retention are gone
        cl_min = self.commitlog.min_offset
        for key, cq in self._queues.items():
            if cl_min > 0:
                for mf in cq.correct_min(cl_min):
                    mf.destroy()
            self._queue_offsets[key] = cq.max_offset
        for mf in self.commitlog.queue.files:
            mf.flushed = min(mf.flushed, mf.wrote)
        self.commitlog.flush()
        self.dispatcher.dispatched_offset = end
        self._appender.last_store_ts = self._last_store_timestamp()
        self._closed = False

    def _rebuilt(self, cq: ConsumeQueue) -> None:
        """A background rebuild is done: puts to the queue continue after its last unit."""
        self._queue_offsets[(cq.topic, cq.queue_id)] = cq.max_offset

    def _last_store_timestamp(self) -> int:
        """Store time of the newest record, so timestamps keep growing across a restart with a clock set back."""
        best = 0
        for cq in self._queues.values():
            u = cq.last_unit()
            if u is not None:
                ts = self._store_time_at(u[0], u[1])
                if ts is not None and ts > best:
                    best = ts
        return best

    def _load_queues(self) -> list[ConsumeQueue]:
        """Load every consume queue; returns those whose files had to be padded or cut (to rebuild)."""
        root = self._config.consume_queue_dir
        damaged: list[ConsumeQueue] = []
        if not os.path.isdir(root):
            return damaged
        report = self.integrity
        for topic in os.listdir(root):
            tdir = os.path.join(root, topic)
            if not os.path.isdir(tdir):
                continue
            for qid in os.listdir(tdir):
                if not qid.lstrip("-").isdigit():
                    continue
                cq = ConsumeQueue(root, topic, int(qid), self._config.mapped_file_size_consume_queue)
                if cq.load(lambda line: report.repaired("%s", line, files=1)):
                    damaged.append(cq)
                self._queues[(topic, int(qid))] = cq
        return damaged

    def _cq(self, topic: str, queue_id: int) -> ConsumeQueue:
        key = (topic, queue_id)
        cq = self._queues.get(key)
        if cq is None:
            cfg = self._config
            cq = ConsumeQueue(cfg.consume_queue_dir, topic, queue_id, cfg.mapped_file_size_consume_queue)
            self._queues[key] = cq
        return cq

    async def start(self) -> None:
        """Start the dispatcher, flush and retention tasks on the running loop."""
        cfg = self._config
        self.dispatcher.start()
        flush_commitlog = timed_flush(self.commitlog.flush, self.stats.fsync_latency_ms, self.commitlog.flushed_offset)
        if cfg.flush_disk_type == "SYNC_FLUSH":
            self._group_commit = GroupCommit(
                flush_commitlog,
                cfg.sync_flush_timeout_ms / 1000,
                flushed=self.commitlog.flushed_offset,
                sizes=self.stats.group_commit_size,
                inline=cfg.group_commit_inline,
            )
            self._group_commit.start()
            self._durability_changed()
            self._warmer = SegmentWarmer(self.commitlog.queue)
            self._warmer.start()
        else:
            if cfg.group_commit_inline:  # a key that does nothing here must not pass for one that works
                _log.warning("groupCommitInline=true has no effect with flushDiskType=%s", cfg.flush_disk_type)
            self._flushers.append(
                IntervalFlusher(
                    "store-flush-commitlog",
                    flush_commitlog,
                    self._cl_executor,
                    cfg.flush_interval_commit_log_ms / 1000,
                )
            )
        self._flushers.append(
            IntervalFlusher(
                "store-flush-logics",
                lambda: self._flush_logics(False),
                self._logic_executor,
                cfg.flush_interval_consume_queue_ms / 1000,
            )
        )
        for f in self._flushers:
            f.start()
        self._tasks.append(asyncio.get_running_loop().create_task(self._retention_loop(), name="store-retention"))
        self._tasks.append(asyncio.get_running_loop().create_task(self._scrub_loop(), name="store-scrub"))
        if self._rebuild is not None and self._rebuild.pending:
            self._tasks.append(asyncio.get_running_loop().create_task(self._rebuild.run(), name="store-cq-rebuild"))

    async def close(self) -> None:
        """Dispatch and flush everything, write the checkpoint, remove the abort marker, release the files."""
        if self._closed:
            return
        self._closed = True
        tasks, self._tasks = self._tasks, []
        await stop_tasks(*tasks)
        await self.dispatcher.stop()
        for f in self._flushers:
            await f.stop()
        self._flushers = []
        if self._group_commit is not None:
            await self._group_commit.stop()
        loop = asyncio.get_running_loop()
        if self._warmer is not None:
            await loop.run_in_executor(self._cl_executor, self._warmer.stop)
        await loop.run_in_executor(self._cl_executor, self.commitlog.flush)
        await loop.run_in_executor(self._logic_executor, self._final_flush)
        self._release()

    def close_sync(self) -> None:
        """Close without an event loop (tests and tools; not while ``start()``'s tasks run)."""
        if self._closed:
            return
        self._closed = True
        self.dispatcher.drain()
        self.commitlog.flush()
        self._final_flush()
        self._release()

    def _final_flush(self) -> None:
        self._flush_logics(close=True)
        remove_abort_marker(self._config.store_path_root_dir)

    def _release(self) -> None:
        self.commitlog.close()
        for cq in self._queues.values():
            cq.close()
        if self.index is not None:
            self.index.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        self._cl_executor.shutdown(wait=True)
        self._logic_executor.shutdown(wait=True)

    def _flush_logics(self, thorough: bool = True, *, close: bool = False) -> None:
        """Flush consume queues and the index, then record how far they are durable (the checkpoint). Blocking;
        a regular pass (``thorough=False``) is batched (``logics_flush.py``)."""
        if self._logics is None:
            self._logics = LogicsFlush(
                self._config.store_path_root_dir, self._queues, self.index, self.commitlog, self._checkpoint,
                lambda: self.dispatcher.dispatched_offset, self._clock,
            )  # fmt: skip
        self._logics.run(thorough=thorough)
        self._seals.mark(self.commitlog.flushed_offset, time.monotonic(), force=close)

    def add_arrival_listener(
        self, cb: ArrivalListener, waiting: Waiting | None = None, *, topic: str | None = None
    ) -> None:
        """``cb(topic, queue_id, max_offset_after, tags_code, store_timestamp, properties)`` after each message is
        dispatched (the broker's long polling), with ``topic`` only after each of that topic's (no call per message
        of the others). ``waiting(topic, queue_id)``, when given, says whether the listener has waiters on a queue: a
        put to such a queue dispatches (and so calls ``cb``) before it returns."""
        self.dispatcher.add_listener(cb, waiting, topic=topic)

    # -- put -------------------------------------------------------------------------------------------------------

    async def put_message(self, req: PutRequest | BatchPutRequest, *, wait: bool = True) -> PutMessageResult:
        """Store one message (``PutRequest``: its properties as the string sent, stored verbatim, or a dict), or a
        batch for one queue (as ``put_messages``).

        Returns PUT_OK with one ``AppendResult`` (physical offset, size, queue offset, store time, offset msgId);
        with SYNC_FLUSH and ``wait`` only once an fsync covers it (FLUSH_DISK_TIMEOUT, items filled, when that takes
        longer than ``sync_flush_timeout_ms``). Never raises for bad input: see ``PutMessageStatus``.

        Not ``put_messages`` of one: a batch of one costs ~15% more CPU than this path (same-run A/B, 60k puts)."""
        res = self.append(req)
        if wait and (self._group_commit is not None or self._replica_wait is not None):
            return await self._after_append(res, wait)
        return res

    async def put_messages(self, req: BatchPutRequest, *, wait: bool = True) -> PutMessageResult:
        """A batch for one queue (SEND_BATCH_MESSAGE), appended with a single write; one ``AppendResult`` each."""
        return await self._after_append(self.append(req), wait)

    def append(self, req: PutRequest | BatchPutRequest) -> PutMessageResult:
        """``put_message`` / ``put_messages`` without waiting for durability (no fsync, no replica ack): the
        append's result at once."""
        if (
            self._closed
            or self.puts_refused is not None
            or self._rebuild is not None
            or time.monotonic() > self.write_deadline  # controller mode's write lease
        ):
            refused = self._refusal(req.topic, req.queue_id)
            if refused is not None:
                return refused
        appender = self._appender
        try:
            if not isinstance(req, BatchPutRequest):
                if not isinstance(req.properties, str):  # the appender writes the text: a dict is encoded once, here
                    req.properties = encode_properties(req.properties)
                return appender.append_one(req)
            return appender.append_batch(req)
        except OSError as exc:  # creating the next segment failed
            return appender.write_failed(exc)

    def _refusal(self, topic: str, queue_id: int) -> PutMessageResult | None:
        """A put refused before it is appended: the store is closed or refuses puts, or the queue is rebuilt."""
        if self._closed or self.puts_refused is not None or time.monotonic() > self.write_deadline:
            remark = self.puts_refused or ("store is closed" if self._closed else self.lease_remark)
            return PutMessageResult(PutMessageStatus.SERVICE_NOT_AVAILABLE, remark=remark)
        if self._rebuild is not None and self._rebuild.busy(topic, queue_id):
            return self._rebuild.refusal(topic, queue_id)
        return None

    def _durability_changed(self) -> None:
        """Recompute ``waits_for_durability`` and ``sync_flush_only`` after the group commit or the replica wait
        changed (plain attributes, not properties: the send service reads both on every send)."""
        self.waits_for_durability = self._group_commit is not None or self._replica_wait is not None
        self.sync_flush_only = self._group_commit if self._replica_wait is None else None

    async def _after_append(self, res: PutMessageResult, wait: bool) -> PutMessageResult:
        """With ``wait``: the group-commit flush and the replica ack (``set_replica_wait``) are requested together
        and awaited together; a flush failure wins over a replica failure, as in J's ``asyncPutMessage``."""
        gc = self._group_commit
        replica = self._replica_wait
        if (gc is None and replica is None) or not wait or res.status is not PutMessageStatus.PUT_OK:
            return res
        end = res.end_offset
        rep = replica(end) if replica is not None else PutMessageStatus.PUT_OK
        fut = gc.request(end) if gc is not None else None
        if fut is not None and not await fut:
            res.status = PutMessageStatus.FLUSH_DISK_TIMEOUT
            res.remark = "flush disk timeout"
        if not isinstance(rep, PutMessageStatus):
            rep = await rep
        if rep is not PutMessageStatus.PUT_OK and res.status is PutMessageStatus.PUT_OK:
            res.status = rep
        return res

    # -- replication (the rest is the StoreReplication mixin) ------------------------------------------------

    def truncate_to(self, offset: int) -> int:
        """Drop the commit log from ``offset`` on (a record boundary), with the consume-queue units and index
        entries of what is dropped (``broker.store.truncate``); returns the bytes dropped."""
        path = os.path.join(self._config.store_path_root_dir, "checkpoint")
        dropped = truncate_log(
            offset, self.commitlog, self._queues.values(), self.index, self.dispatcher, (path, self._checkpoint),
            self.integrity,
        )  # fmt: skip
        if dropped:
            for key, cq in self._queues.items():
                self._queue_offsets[key] = cq.max_offset
            self._replica_parser = None
        return dropped

    def delete_topics(self, topics: Iterable[str]) -> int:
        """Drop the consume queues of these topics (their messages stay in the commit log until retention);
        returns the number of queues removed."""
        topics = set(topics)
        if self.dispatcher.pending:
            self.dispatcher.drain()
        if self._rebuild is not None:
            self._rebuild.forget(topics)
        self.dispatcher.marks.forget(topics)
        n = 0
        for key in [k for k in self._queues if k[0] in topics]:
            self._queues.pop(key).destroy()
            self._queue_offsets.pop(key, None)
            n += 1
        return n

    async def _scrub_loop(self) -> None:
        """Verify the records recovery did not scan, a slice per loop iteration; reads of them get cheap."""
        scrubber = Scrubber(self.commitlog, self._quarantine, self._trusted_from, self._seals)
        while True:
            try:
                more = scrubber.step()
            except Exception:
                _log.exception("commit-log scrub failed")
                return
            self._trusted_from = min(self._trusted_from, scrubber.trusted_from)
            if not more:
                return
            await asyncio.sleep(0)

    # -- stats -----------------------------------------------------------------------------------------------------

    def runtime_info(self) -> dict[str, Any]:
        cfg = self._config
        return {
            "commitLogMinOffset": self.commitlog.min_offset,
            "commitLogMaxOffset": self.commitlog.max_offset,
            "commitLogFlushedOffset": self.commitlog.flushed_offset,
            "commitLogDiskRatio": round(disk_ratio(cfg.store_path_root_dir) / 100, 4),
            "dispatchBehindBytes": max(0, self.commitlog.max_offset - self.dispatcher.dispatched_offset),
            "putMessageTimesTotal": self.put_count,
            "putMessageSizeTotal": self.put_bytes,
            "getMessageTimesTotal": self.get_count,
            "bootTimestamp": self.boot_timestamp,
            "queueCount": len(self._queues),
            "groupCommitFsyncs": self._group_commit.fsyncs if self._group_commit else 0,
            "storeQuarantinedRecords": self.integrity.quarantined_records,
            "storeRepairedFiles": self.integrity.repaired_files,
            "storeSkippedReads": self.integrity.skipped_reads,
        }

    def check_report(self) -> dict[str, Any]:
        """What the store found damaged and did about it (mqadmin checkStore), with the quarantine files."""
        out = self.integrity.as_dict()
        out["quarantineFiles"] = self._quarantine.files()
        out["trustedFromOffset"] = self._trusted_from
        return out
