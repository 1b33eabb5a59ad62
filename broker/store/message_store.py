"""MessageStore: the façade the broker talks to — put, get, offsets, lookups, lifecycle.

Everything here runs on the event loop except msync/fsync (one dedicated flush thread). The put path encodes each
record once (``protocol.message.encode_record``), assigns queue offsets, appends the batch with a single copy into
the mapped commit log, dispatches it to consume queues and the index at once, and — with SYNC_FLUSH — returns only
after a group-commit fsync covering it. The get path reads consume-queue units and returns one ``bytes`` object
holding the matching records back to back (a PULL reply body), with RocketMQ's status and next-offset rules.

On-disk layout under ``store_path_root_dir``: ``commitlog/``, ``consumequeue/<topic>/<qid>/``, ``index/``,
``checkpoint``, ``abort`` and ``lock`` (see each module's table).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import fcntl
import logging
import os
import time
from collections.abc import Callable
from typing import Any

from broker.store.checkpoint import (
    Checkpoint,
    create_abort_marker,
    read_checkpoint,
    remove_abort_marker,
    write_checkpoint,
)
from broker.store.commitlog import CommitLog
from broker.store.config import StoreConfig
from broker.store.consume_queue import UNIT, UNIT_SIZE, ConsumeQueue
from broker.store.dispatcher import ArrivalListener, Dispatcher
from broker.store.errors import StoreClosedError, StoreLockedError
from broker.store.flush import GroupCommit, IntervalFlusher
from broker.store.index import IndexService
from broker.store.recovery import recover
from broker.store.results import AppendResult, GetMessageResult, GetMessageStatus, PutMessageResult, PutMessageStatus
from broker.store.retention import disk_ratio, expired_commit_log_files, parse_delete_when
from protocol.message import (
    I32,
    I64,
    MAX_PROPERTIES_BYTES,
    MAX_TOPIC_BYTES,
    TRANSACTION_COMMIT_TYPE,
    TRANSACTION_NOT_TYPE,
    BatchItem,
    MessageExt,
    PropertyKey,
    create_offset_msg_id,
    decode_properties,
    decode_record,
    encode_properties,
    encode_record,
    store_timestamp_pos,
    transaction_type,
)

_log = logging.getLogger("rocketq.store")

TagsCodeFilter = Callable[[int], bool]
TagsFilter = Callable[[str | None], bool]


def _split_host(host: str | tuple[str, int]) -> tuple[str, int]:
    if isinstance(host, tuple):
        return host
    h, _, p = host.rpartition(":")
    if not h:
        return host, 0
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    try:
        return h, int(p)
    except ValueError:
        return h, 0


class MessageStore:
    def __init__(self, config: StoreConfig, *, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self._clock = clock
        self.commitlog = CommitLog(config.commit_log_dir, config.mapped_file_size_commit_log)
        self._queues: dict[tuple[str, int], ConsumeQueue] = {}
        self._queue_offsets: dict[tuple[str, int], int] = {}
        self.index = (
            IndexService(config.index_dir, config.max_hash_slot_num, config.max_index_num)
            if config.message_index_enable
            else None
        )
        self.dispatcher = Dispatcher(self._cq, self.index)
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="store-flush")
        self._group_commit: GroupCommit | None = None
        self._flushers: list[IntervalFlusher] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._lock_fd: int | None = None
        self._closed = True
        self.last_exit_ok = True
        self.put_count = 0
        self.put_bytes = 0
        self.get_count = 0
        self.boot_timestamp = int(clock() * 1000)
        self._checkpoint = Checkpoint()

    # -- lifecycle -------------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, config: StoreConfig, *, clock: Callable[[], float] = time.time) -> MessageStore:
        """Lock the directory, load every file and recover. Synchronous; call ``start()`` on the loop after."""
        store = cls(config, clock=clock)
        store._load()
        return store

    def _load(self) -> None:
        cfg = self.config
        os.makedirs(cfg.store_path_root_dir, exist_ok=True)
        self._lock_fd = os.open(os.path.join(cfg.store_path_root_dir, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise StoreLockedError(f"{cfg.store_path_root_dir} is in use by another process") from None
        self.last_exit_ok = not create_abort_marker(cfg.store_path_root_dir)
        self._checkpoint = read_checkpoint(os.path.join(cfg.store_path_root_dir, "checkpoint"))
        self.commitlog.queue.load()
        self._load_queues()
        if self.index is not None:
            self.index.load()
        end = recover(
            self.commitlog,
            self._queues.values(),
            self.index,
            self.dispatcher,
            self._checkpoint,
            clean=self.last_exit_ok,
            check_crc=cfg.check_crc_on_recover,
        )
        # RocketMQ's correctMinOffset at start: units pointing into commit-log files deleted by retention are gone
        # (recovery alone would reset min to the first consume-queue file's start)
        cl_min = self.commitlog.min_offset
        for key, cq in self._queues.items():
            if cl_min > 0:
                cq.correct_min(cl_min)
            self._queue_offsets[key] = cq.max_offset
        self.commitlog.queue.flush()
        self.dispatcher.dispatched_offset = end
        self._closed = False

    def _load_queues(self) -> None:
        root = self.config.consume_queue_dir
        if not os.path.isdir(root):
            return
        for topic in os.listdir(root):
            tdir = os.path.join(root, topic)
            if not os.path.isdir(tdir):
                continue
            for qid in os.listdir(tdir):
                if not qid.lstrip("-").isdigit():
                    continue
                cq = ConsumeQueue(root, topic, int(qid), self.config.mapped_file_size_consume_queue)
                cq.load()
                self._queues[(topic, int(qid))] = cq

    def _cq(self, topic: str, queue_id: int) -> ConsumeQueue:
        key = (topic, queue_id)
        cq = self._queues.get(key)
        if cq is None:
            cq = ConsumeQueue(
                self.config.consume_queue_dir, topic, queue_id, self.config.mapped_file_size_consume_queue
            )
            self._queues[key] = cq
        return cq

    async def start(self) -> None:
        cfg = self.config
        if cfg.flush_disk_type == "SYNC_FLUSH":
            self._group_commit = GroupCommit(self.commitlog.flush, self._executor, cfg.sync_flush_timeout_ms / 1000)
            self._group_commit.start()
        else:
            self._flushers.append(
                IntervalFlusher(
                    "store-flush-commitlog",
                    self.commitlog.flush,
                    self._executor,
                    cfg.flush_interval_commit_log_ms / 1000,
                )
            )
        self._flushers.append(
            IntervalFlusher(
                "store-flush-logics", self._flush_logics, self._executor, cfg.flush_interval_consume_queue_ms / 1000
            )
        )
        for f in self._flushers:
            f.start()
        self._tasks.append(asyncio.get_running_loop().create_task(self._retention_loop(), name="store-retention"))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            try:
                await t
            except asyncio.CancelledError:
                pass
        self._tasks = []
        for f in self._flushers:
            await f.stop()
        if self._group_commit is not None:
            await self._group_commit.stop()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._final_flush)
        self._executor.shutdown(wait=True)

    def close_sync(self) -> None:
        """Close without an event loop (tests and tools)."""
        if self._closed:
            return
        self._closed = True
        self._final_flush()
        self._executor.shutdown(wait=True)

    def _final_flush(self) -> None:
        self.commitlog.flush()
        self._flush_logics()
        remove_abort_marker(self.config.store_path_root_dir)
        self.commitlog.close()
        for cq in self._queues.values():
            cq.close()
        if self.index is not None:
            self.index.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _flush_logics(self) -> None:
        """Flush consume queues and the index, then record how far they are durable (the checkpoint)."""
        dispatched = self.dispatcher.dispatched_offset
        for cq in list(self._queues.values()):
            cq.flush()
        if self.index is not None:
            self.index.flush()
        cp = self._checkpoint
        now = int(self._clock() * 1000)
        cp.dispatched_offset = min(dispatched, self.commitlog.flushed_offset)
        cp.logics_msg_timestamp = now
        cp.physic_msg_timestamp = now
        cp.index_msg_timestamp = now
        write_checkpoint(os.path.join(self.config.store_path_root_dir, "checkpoint"), cp)

    def add_arrival_listener(self, cb: ArrivalListener) -> None:
        self.dispatcher.add_listener(cb)

    # -- put -------------------------------------------------------------------------------------------------------

    async def put_message(
        self,
        topic: str,
        queue_id: int,
        flag: int,
        sys_flag: int,
        born_timestamp: int,
        born_host: str | tuple[str, int],
        body: bytes,
        properties: str | dict[str, str],
        *,
        reconsume_times: int = 0,
        prepared_transaction_offset: int = 0,
        wait: bool = True,
    ) -> PutMessageResult:
        if isinstance(properties, str):
            props_text, props = properties, decode_properties(properties)
        else:
            props_text, props = encode_properties(properties), properties
        return await self._put(
            topic,
            queue_id,
            sys_flag,
            born_timestamp,
            born_host,
            [(body, props_text, props, flag)],
            reconsume_times,
            prepared_transaction_offset,
            wait,
        )

    async def put_messages(
        self,
        topic: str,
        queue_id: int,
        sys_flag: int,
        born_timestamp: int,
        born_host: str | tuple[str, int],
        items: list[BatchItem],
        *,
        wait: bool = True,
    ) -> PutMessageResult:
        """A batch for one queue, appended with a single write."""
        entries = [(it.body, encode_properties(it.properties), it.properties, it.flag) for it in items]
        return await self._put(topic, queue_id, sys_flag, born_timestamp, born_host, entries, 0, 0, wait)

    async def _put(
        self,
        topic: str,
        queue_id: int,
        sys_flag: int,
        born_timestamp: int,
        born_host: str | tuple[str, int],
        entries: list[tuple[bytes, str, dict[str, str], int]],
        reconsume_times: int,
        prepared_transaction_offset: int,
        wait: bool,
    ) -> PutMessageResult:
        if self._closed:
            return PutMessageResult(PutMessageStatus.SERVICE_NOT_AVAILABLE, remark="store is closed")
        cfg = self.config
        topic_b = topic.encode()
        if not entries:
            return PutMessageResult(PutMessageStatus.MESSAGE_ILLEGAL, remark="no message to put")
        if len(topic_b) > MAX_TOPIC_BYTES:
            return PutMessageResult(PutMessageStatus.MESSAGE_ILLEGAL, remark=f"topic length over {MAX_TOPIC_BYTES}")
        born = _split_host(born_host)
        store_host = cfg.store_host
        tran = transaction_type(sys_flag)
        dispatch = tran in (TRANSACTION_NOT_TYPE, TRANSACTION_COMMIT_TYPE)
        key = (topic, queue_id)
        next_qoff = self._queue_offsets.get(key, 0)
        buf = bytearray()
        sizes: list[int] = []
        qoffs: list[int] = []
        ts_pos: list[int] = []
        for body, props_text, _props, flag in entries:
            if len(body) > cfg.max_message_size:
                return PutMessageResult(
                    PutMessageStatus.MESSAGE_ILLEGAL, remark=f"message body size over max value {cfg.max_message_size}"
                )
            if len(props_text) > MAX_PROPERTIES_BYTES or len(props_text.encode()) > MAX_PROPERTIES_BYTES:
                return PutMessageResult(PutMessageStatus.PROPERTIES_SIZE_EXCEEDED, remark="properties too long")
            rec = encode_record(
                topic=topic_b,
                body=body,
                properties=props_text,
                queue_id=queue_id,
                flag=flag,
                sys_flag=sys_flag,
                born_timestamp=born_timestamp,
                born_host=born,
                store_host=store_host,
                reconsume_times=reconsume_times,
                prepared_transaction_offset=prepared_transaction_offset,
            )
            sizes.append(len(rec))
            qoffs.append(next_qoff + len(qoffs) if dispatch else 0)
            (rec_sys,) = I32.unpack_from(rec, 36)
            ts_pos.append(store_timestamp_pos(rec_sys))
            buf += rec
        if len(buf) > cfg.mapped_file_size_commit_log - 8:
            return PutMessageResult(PutMessageStatus.MESSAGE_ILLEGAL, remark="message larger than a commit-log file")
        now = int(self._clock() * 1000)
        try:
            phys = self.commitlog.append(buf, sizes, qoffs, ts_pos, now)
        except OSError as exc:
            _log.error("commit log append failed: %s", exc)
            return PutMessageResult(PutMessageStatus.CREATE_MAPEDFILE_FAILED, remark=str(exc))
        if dispatch:
            self._queue_offsets[key] = next_qoff + len(entries)
        results: list[AppendResult] = []
        pos = phys
        for (_body, _pt, props, _flag), size, qoff in zip(entries, sizes, qoffs, strict=True):
            self.dispatcher.dispatch(topic, queue_id, qoff, pos, size, sys_flag, now, props)
            results.append(
                AppendResult(pos, size, queue_id, qoff, now, create_offset_msg_id(store_host[0], store_host[1], pos))
            )
            pos += size
        self.put_count += len(entries)
        self.put_bytes += len(buf)
        if wait and self._group_commit is not None and not await self._group_commit.wait_flushed(pos):
            return PutMessageResult(PutMessageStatus.FLUSH_DISK_TIMEOUT, results, "flush disk timeout")
        return PutMessageResult(PutMessageStatus.PUT_OK, results)

    # -- get -------------------------------------------------------------------------------------------------------

    async def get_message(
        self,
        group: str,
        topic: str,
        queue_id: int,
        offset: int,
        max_msgs: int,
        max_bytes: int | None = None,
        message_filter: TagsCodeFilter | None = None,
        tags_filter: TagsFilter | None = None,
    ) -> GetMessageResult:
        return self.get_message_sync(group, topic, queue_id, offset, max_msgs, max_bytes, message_filter, tags_filter)

    def get_message_sync(
        self,
        group: str,
        topic: str,
        queue_id: int,
        offset: int,
        max_msgs: int,
        max_bytes: int | None = None,
        message_filter: TagsCodeFilter | None = None,
        tags_filter: TagsFilter | None = None,
    ) -> GetMessageResult:
        """RocketMQ's DefaultMessageStore.getMessage: statuses and nextBeginOffset corrections."""
        if self._closed:
            raise StoreClosedError("store is closed")
        cfg = self.config
        max_bytes = cfg.max_transfer_bytes_on_message_in_memory if max_bytes is None else max_bytes
        max_msgs = max(1, min(max_msgs, cfg.max_transfer_count_on_message_in_memory))
        cq = self._queues.get((topic, queue_id))
        if cq is None:
            return GetMessageResult(GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, 0, 0, 0)
        min_off = cq.min_offset
        max_off = cq.max_offset
        if max_off == 0:
            return GetMessageResult(GetMessageStatus.NO_MESSAGE_IN_QUEUE, 0, min_off, max_off)
        if offset < min_off:
            return GetMessageResult(GetMessageStatus.OFFSET_TOO_SMALL, min_off, min_off, max_off)
        if offset == max_off:
            return GetMessageResult(GetMessageStatus.OFFSET_OVERFLOW_ONE, offset, min_off, max_off)
        if offset > max_off:
            nxt = min_off if min_off == 0 else max_off
            return GetMessageResult(GetMessageStatus.OFFSET_OVERFLOW_BADLY, nxt, min_off, max_off)
        # RocketMQ scans at most 16000 bytes of units (800) when filtering
        scan_units = max(max_msgs, 800) if (message_filter or tags_filter) else max_msgs
        got = cq.read(offset, scan_units)
        if got is None:
            return GetMessageResult(GetMessageStatus.OFFSET_FOUND_NULL, cq.roll_next_file(offset), min_off, max_off)
        units, count = got
        status = GetMessageStatus.NO_MATCHED_MESSAGE
        parts: list[memoryview] = []
        qoffs: list[int] = []
        total = 0
        commitlog = self.commitlog
        cl_min = commitlog.min_offset
        next_phy_file_start = -1
        scanned = 0
        for i in range(count):
            phys, size, tags_code = UNIT.unpack_from(units, i * UNIT_SIZE)
            if parts and (len(parts) >= max_msgs or total + size > max_bytes):
                break
            scanned = i + 1
            if next_phy_file_start >= 0 and phys < next_phy_file_start:
                continue
            if message_filter is not None and not message_filter(tags_code):
                continue
            view = commitlog.read(phys, size) if phys >= cl_min else None
            if view is None:
                if not parts:
                    status = GetMessageStatus.MESSAGE_WAS_REMOVING
                next_phy_file_start = commitlog.roll_next_file(phys)
                continue
            if tags_filter is not None and not tags_filter(_record_tags(view)):
                continue
            parts.append(view)
            qoffs.append(offset + i)
            total += size
            status = GetMessageStatus.FOUND
            next_phy_file_start = -1
        self.get_count += len(parts)
        buffer = b"".join(parts) if parts else b""
        return GetMessageResult(status, offset + scanned, min_off, max_off, buffer, len(parts), qoffs)

    # -- offsets and lookups ---------------------------------------------------------------------------------------

    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        cq = self._queues.get((topic, queue_id))
        return cq.max_offset if cq is not None else 0

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        cq = self._queues.get((topic, queue_id))
        return cq.min_offset if cq is not None else 0

    def _unit_store_time(self, cq: ConsumeQueue, qoff: int) -> int | None:
        u = cq.unit(qoff)
        if u is None:
            return None
        view = self.commitlog.read(u[0], u[1])
        if view is None:
            return None
        from protocol.message import SYSFLAG_BORNHOST_V6

        (sys_flag,) = I32.unpack_from(view, 36)
        (ts,) = I64.unpack_from(view, 56 + (12 if sys_flag & SYSFLAG_BORNHOST_V6 else 0))
        return int(ts)

    async def get_offset_in_queue_by_time(self, topic: str, queue_id: int, timestamp: int) -> int:
        return self.get_offset_in_queue_by_time_sync(topic, queue_id, timestamp)

    def get_offset_in_queue_by_time_sync(self, topic: str, queue_id: int, timestamp: int) -> int:
        """The first queue offset whose store time is >= ``timestamp`` (binary search); max offset if none."""
        cq = self._queues.get((topic, queue_id))
        if cq is None:
            return 0
        lo, hi = cq.min_offset, cq.max_offset
        while lo < hi:
            mid = (lo + hi) // 2
            ts = self._unit_store_time(cq, mid)
            if ts is None or ts < timestamp:  # removed under us: search the live part
                lo = mid + 1
            else:
                hi = mid
        return lo

    async def get_earliest_message_time(self, topic: str, queue_id: int) -> int:
        cq = self._queues.get((topic, queue_id))
        if cq is None:
            return -1
        ts = self._unit_store_time(cq, cq.min_offset)
        return -1 if ts is None else ts

    def get_message_store_timestamp(self, topic: str, queue_id: int, queue_offset: int) -> int:
        cq = self._queues.get((topic, queue_id))
        ts = self._unit_store_time(cq, queue_offset) if cq is not None else None
        return -1 if ts is None else ts

    def get_commit_log_max_offset(self) -> int:
        return self.commitlog.max_offset

    def get_commit_log_min_offset(self) -> int:
        return self.commitlog.min_offset

    def select_one_message_by_offset(self, phys: int, size: int | None = None) -> bytes | None:
        if phys < self.commitlog.min_offset:
            return None
        if size is None:
            size = self.commitlog.read_size(phys)
            if size is None or size <= 0:
                return None
        view = self.commitlog.read(phys, size)
        return bytes(view) if view is not None else None

    def look_message_by_offset(self, phys: int) -> MessageExt | None:
        raw = self.select_one_message_by_offset(phys)
        if raw is None:
            return None
        try:
            return decode_record(raw)[0]
        except ValueError:
            return None

    def query_message(self, topic: str, key: str, max_num: int, begin: int, end: int) -> list[bytes]:
        """Stored records of ``topic`` whose KEYS contain ``key`` or whose UNIQ_KEY is ``key``, newest first."""
        if self.index is None:
            return []
        out: list[bytes] = []
        for phys in self.index.query(topic, key, max_num * 2, begin, end):
            raw = self.select_one_message_by_offset(phys)
            if raw is None:
                continue
            try:
                msg = decode_record(raw)[0]
            except ValueError:
                continue
            if msg.topic == topic and (key in msg.keys or msg.properties.get(PropertyKey.UNIQ_KEY) == key):
                out.append(raw)
                if len(out) >= max_num:
                    break
        return out

    def topics_and_queues(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for topic, qid in self._queues:
            out.setdefault(topic, []).append(qid)
        return out

    def delete_topics(self, topics: set[str]) -> int:
        n = 0
        for key in [k for k in self._queues if k[0] in topics]:
            self._queues.pop(key).destroy()
            self._queue_offsets.pop(key, None)
            n += 1
        return n

    # -- retention -------------------------------------------------------------------------------------------------

    def clean_expired(self, *, ratio: Callable[[], float] | None = None) -> int:
        """One retention pass; returns the number of commit-log files deleted."""
        cfg = self.config
        n = expired_commit_log_files(
            self.commitlog,
            now=self._clock(),
            reserved_hours=cfg.file_reserved_time_hours,
            delete_hours=parse_delete_when(cfg.delete_when),
            max_ratio=cfg.disk_max_used_space_ratio,
            ratio=ratio or (lambda: disk_ratio(cfg.store_path_root_dir)),
            batch_max=cfg.delete_files_batch_max,
        )
        if n == 0:
            return 0
        gone = self.commitlog.queue.delete_first(n)
        for mf in gone:
            _log.info("commit log file deleted by retention: %s", mf.path)
        cl_min = self.commitlog.min_offset
        for cq in self._queues.values():
            cq.correct_min(cl_min)
        if self.index is not None:
            self.index.delete_before(cl_min)
        return n

    async def _retention_loop(self) -> None:
        interval = self.config.clean_resource_interval_ms / 1000
        while True:
            await asyncio.sleep(interval)
            try:
                self.clean_expired()
            except Exception:
                _log.exception("retention pass failed")

    # -- stats -----------------------------------------------------------------------------------------------------

    def runtime_info(self) -> dict[str, Any]:
        cfg = self.config
        return {
            "commitLogMinOffset": self.commitlog.min_offset,
            "commitLogMaxOffset": self.commitlog.max_offset,
            "commitLogDiskRatio": round(disk_ratio(cfg.store_path_root_dir) / 100, 4),
            "dispatchBehindBytes": max(0, self.commitlog.max_offset - self.dispatcher.dispatched_offset),
            "putMessageTimesTotal": self.put_count,
            "putMessageSizeTotal": self.put_bytes,
            "getMessageTimesTotal": self.get_count,
            "bootTimestamp": self.boot_timestamp,
            "queueCount": len(self._queues),
            "groupCommitFsyncs": self._group_commit.fsyncs if self._group_commit else 0,
        }


def _record_tags(view: memoryview) -> str | None:
    """The TAGS property of a stored record, for the exact tag check after the hash pre-filter."""
    try:
        return decode_record(view)[0].properties.get(PropertyKey.TAGS)
    except ValueError:
        return None
