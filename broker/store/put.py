"""The put path: validate, encode once with final offsets, append with one write, hand over to the dispatcher.

Everything here is synchronous and runs on the event loop between two awaits, so appends are serialised without a
lock (RocketMQ's put lock) and the physical offset, the queue offsets and the store timestamp are all known before
a record is encoded. Each record is therefore packed exactly once, with its final values
(``protocol.record.encode_record_v4``, the record module's fast path: fields 1-15 in one ``struct`` call), then
the body, topic and properties are joined into one ``bytes`` per record; a batch's records are encoded straight from
the received body by the loop form (``encode_records_v4``) and joined once — a whole batch is one ``pwrite``.
Nothing is patched afterwards and nothing is parsed again: the dispatcher gets topic, queue, offsets, sizes and the
properties string with the append.

Every record is sealed with the whole-record CRC trailer that ``record_check`` verifies (its last property), written
by the record module's encoders as they encode: the body CRC the record needs anyway is continued over the header,
topic and properties, so sealing costs ~100 bytes of CRC.

A full disk makes the store refuse puts with SERVICE_NOT_AVAILABLE ("disk full: …", J's DISK_FULL running flag),
while reads go on; it never kills the process: commit-log segments get all their blocks when they are created
(``posix_fallocate``), index entries are allocated ahead of the writer, and consume-queue pages are reserved by a
``pwrite`` (``mapped_file``), so running out of space is an ``OSError``, never a SIGBUS on a mapped page. A full
disk is noticed three ways: ENOSPC or EDQUOT from a commit-log write or segment creation, a dispatch that stalls
on a consume-queue page (``Dispatcher.stalled``), and a probe of the volume's free space, at most once a second of
the store clock (checked on the next put), finding less than ``reserve``: ``min(DISK_SPACE_LOW, the volume's size ×
(100 − diskSpaceWarningLevelRatio) %)`` — room kept for consume queues, index and metadata. Puts resume on the
first probe that finds ``reserve`` free again and dispatch caught up (J's rule: as soon as the ratio allows); a put
that needs a new segment then needs ``mappedFileSizeCommitLog`` bytes free, else it is refused again, cleanly. A
write that failed leaves the file's write position where it was, so the next append overwrites whatever part of it
reached the file.

Limits, with RocketMQ's statuses: a stored record (header, topic, body and properties: J's ``msgLen``, not only the
body) over ``max_message_size`` or a topic over 127 bytes → MESSAGE_ILLEGAL;
properties over 32767 bytes → PROPERTIES_SIZE_EXCEEDED; a record (or batch) larger than a commit-log file (less the
8-byte blank) → MESSAGE_ILLEGAL. Store timestamps never go backwards, even if the clock does, so the by-time search
of a queue stays a binary search.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Callable
from typing import Final, cast

from broker.store.commitlog import CommitLog
from broker.store.dispatcher import Dispatcher
from broker.store.mapped_file import MappedFile
from broker.store.record_check import DIGITS_LEN, MAX_SEALABLE_PROPERTIES, TRAILER_PREFIX
from broker.store.request import Appended, BatchPutRequest, Host, Properties, PutRequest
from broker.store.results import AppendResult, AppendRun, PutMessageResult, PutMessageStatus
from protocol.batch import BatchView, encode_batch, scan_batch
from protocol.crc import crc32
from protocol.message_properties import PropertyKey
from protocol.msg_id import offset_msg_id_prefix
from protocol.record import (
    FIXED_SIZE_V4,
    MAX_PROPERTIES_BYTES,
    MAX_TOPIC_BYTES,
    SYSFLAG_BORNHOST_V6,
    SYSFLAG_STOREHOST_V6,
    TRANSACTION_COMMIT_TYPE,
    TRANSACTION_NOT_TYPE,
    TRANSACTION_PREPARED_TYPE,
    RecordPlace,
    RecordRun,
    encode_message,
    encode_record_v4,
    encode_records_v4,
    host_block_v4,
    split_host,
)

_log = logging.getLogger("rocketq.store.put")

_V6_BITS: Final = SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6
# NOT_TYPE (0) and COMMIT (8) are dispatched, PREPARED (4) and ROLLBACK (12) are not: exactly the 0x4 bit
_NOT_DISPATCHED_BIT: Final = TRANSACTION_PREPARED_TYPE
assert {t for t in range(0, 16, 4) if not t & _NOT_DISPATCHED_BIT} == {TRANSACTION_NOT_TYPE, TRANSACTION_COMMIT_TYPE}
_TOPIC_CACHE_MAX: Final = 65536
_TAGS: Final = PropertyKey.TAGS
_KEYS: Final = PropertyKey.KEYS
_UNIQ: Final = PropertyKey.UNIQ_KEY
_encode_v4 = encode_record_v4
_encode_run = encode_records_v4
_crc32 = crc32
_DIGITS: Final = DIGITS_LEN + 1  # the trailer's digits and final separator, added after its CRC is known
_TRAILER: Final = TRAILER_PREFIX
_SEP_TRAILER: Final = b"\x02" + TRAILER_PREFIX
_TRAILER_ADDS: Final = len(_TRAILER) + _DIGITS  # what each trailer adds to the properties length
_SEP_TRAILER_ADDS: Final = len(_SEP_TRAILER) + _DIGITS

DISK_SPACE_LOW: Final = 32 * 1024 * 1024
_DISK_FULL_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EDQUOT})
DISK_FULL_REMARK: Final = "disk full: the commit log's volume has no space left; puts resume once space is freed"


def _statvfs(path: str) -> os.statvfs_result:
    """The volume holding ``path`` (or its nearest existing parent: the commit-log directory appears with the
    first segment)."""
    while not os.path.isdir(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return os.statvfs(path)


def free_bytes(path: str) -> int:
    """Bytes available to this process on the volume holding ``path``."""
    st = _statvfs(path)
    return st.f_bavail * st.f_frsize


def volume_bytes(path: str) -> int:
    """The size of the volume holding ``path``."""
    st = _statvfs(path)
    return st.f_blocks * st.f_frsize


def reserve_bytes(volume: int, warning_ratio: int) -> int:
    """Free bytes below which puts are refused: ``min(DISK_SPACE_LOW, volume × (100 − warning_ratio) %)``."""
    return min(DISK_SPACE_LOW, volume * (100 - warning_ratio) // 100)


def _fail(status: PutMessageStatus, remark: str) -> PutMessageResult:
    return PutMessageResult(status, [], remark)


class Appender:
    """Appends messages to the commit log; owns the per-queue next offsets (RocketMQ's topicQueueTable)."""

    def __init__(
        self,
        commitlog: CommitLog,
        dispatcher: Dispatcher,
        queue_offsets: dict[tuple[str, int], int],
        clock: Callable[[], float],
        *,
        store_host: tuple[str, int],
        max_message_size: int,
        free_space: Callable[[], int] | None = None,
        seal: bool = True,
        warning_ratio: int = 90,
    ) -> None:
        self.commitlog = commitlog
        # records get the whole-record CRC trailer unless their properties leave no room: the length limit
        self._seal_max = MAX_SEALABLE_PROPERTIES if seal else -1
        self.disk_full = False
        self._free_space = free_space or (lambda: free_bytes(commitlog.queue.dir))
        try:
            volume = volume_bytes(commitlog.queue.dir)
        except OSError:
            volume = 1 << 62
        self.reserve = reserve_bytes(volume, warning_ratio)
        self.next_probe = 0.0  # store-clock time of the next free-space probe
        self.dispatcher = dispatcher
        dispatcher.on_stall = self._dispatch_stalled
        self.queue_offsets = queue_offsets
        self._clock = clock
        self._topics: dict[str, bytes | None] = {}
        self._born: dict[Host, bytes | None] = {}
        self.last_store_ts = 0
        self.put_count = 0
        self.put_bytes = 0
        self.configure(store_host=store_host, max_message_size=max_message_size)

    def configure(self, *, store_host: tuple[str, int], max_message_size: int) -> None:
        """(Re)read the settings that shape records; the broker learns its port only after the store opened."""
        self.store_host = store_host
        self.max_message_size = max_message_size
        self.msg_id_prefix = offset_msg_id_prefix(*store_host)
        block = host_block_v4(store_host)
        self._store_block = block  # None for an IPv6 store host: the general encoder writes it (append_one)

    def _topic_block(self, topic: str) -> bytes | None:
        """``int8 length + utf-8 topic``, or None when the topic is over 127 bytes."""
        block = self._topics.get(topic, b"")
        if block == b"":
            raw = topic.encode()
            block = bytes((len(raw),)) + raw if len(raw) <= MAX_TOPIC_BYTES else None
            if len(self._topics) >= _TOPIC_CACHE_MAX:
                self._topics.clear()
            self._topics[topic] = block
        return block

    def _born_block(self, host: Host) -> bytes | None:
        block = self._born.get(host, b"")
        if block == b"":
            block = host_block_v4(split_host(host))
            if len(self._born) >= _TOPIC_CACHE_MAX:
                self._born.clear()
            self._born[host] = block
        return block

    def write_failed(self, exc: OSError) -> PutMessageResult:
        """The answer to an append whose write (or segment creation) raised; a full disk stops puts."""
        if exc.errno in _DISK_FULL_ERRNOS:
            if not self.disk_full:
                _log.error("commit log volume is full, refusing puts until space is freed: %s", exc)
            self.disk_full = True
            self.next_probe = self._clock() + 1.0
            return _fail(PutMessageStatus.SERVICE_NOT_AVAILABLE, DISK_FULL_REMARK)
        _log.error("commit log append failed: %s", exc)
        return _fail(PutMessageStatus.UNKNOWN_ERROR, f"commit log append failed: {exc}")

    def disk_refusal(self, now: float | None = None) -> PutMessageResult | None:
        """SERVICE_NOT_AVAILABLE while the disk is full, else None; called before every append (with the store
        clock's reading when the caller has one). Probes the free space when the probe is due (once a second) or
        the wall clock stepped back."""
        if now is None:
            now = self._clock()
        if not self.next_probe - 2.0 <= now < self.next_probe:
            self.next_probe = now + 1.0
            try:
                free = self._free_space()
            except OSError as exc:
                _log.warning("free-space probe failed: %s", exc)
                free = -1
            if free >= 0:
                if self.disk_full and free >= self.reserve and self.dispatcher.stalled is None:
                    _log.warning("commit log volume has %d bytes free again, accepting puts", free)
                    self.disk_full = False
                elif not self.disk_full and free < self.reserve:
                    _log.error(
                        "commit log volume has %d bytes free (below %d), refusing puts until space is freed",
                        free,
                        self.reserve,
                    )
                    self.disk_full = True
        return _fail(PutMessageStatus.SERVICE_NOT_AVAILABLE, DISK_FULL_REMARK) if self.disk_full else None

    def _dispatch_stalled(self) -> None:
        """The dispatcher could not write a consume-queue page: refuse puts until it has caught up."""
        self.disk_full = True
        self.next_probe = self._clock() + 1.0

    def _now(self, clock: float | None = None) -> int:
        """The store timestamp (ms) of the next append: never before the previous one."""
        now = int((self._clock() if clock is None else clock) * 1000)
        if now < self.last_store_ts:
            now = self.last_store_ts
        self.last_store_ts = now
        return now

    def _commit(
        self,
        mf: MappedFile,
        data: bytes,
        req: PutRequest | BatchPutRequest,
        qoff: int,
        sizes: list[int],
        texts: list[Properties],
    ) -> PutMessageResult:
        """Write one append of ``req`` (a message or a batch: records of ``sizes``, already encoded at the end of
        ``mf`` from queue offset ``qoff``, stamped ``last_store_ts``), advance the queue offset, hand it to the
        dispatcher with each record's properties ``texts`` and answer with where they landed (a batch: as columns, no
        object per record)."""
        phys = mf.start + mf.wrote
        try:
            mf.write(data)
        except OSError as exc:
            return self.write_failed(exc)
        now = self.last_store_ts
        queue_id = req.queue_id
        dispatch = not req.sys_flag & _NOT_DISPATCHED_BIT
        if dispatch:
            self.queue_offsets[(req.topic, queue_id)] = qoff + len(sizes)
        self.dispatcher.submit(Appended(req, qoff, phys, sizes, now, texts))
        self.put_count += len(sizes)
        self.put_bytes += len(data)
        prefix = self.msg_id_prefix
        if len(sizes) == 1:  # a single message: its one result
            return PutMessageResult(
                PutMessageStatus.PUT_OK, [AppendResult(phys, sizes[0], queue_id, qoff, now, prefix)]
            )
        # a batch: its results as columns (records that are not dispatched take no queue offset)
        run = AppendRun(phys, phys + len(data), sizes, queue_id, qoff, 1 if dispatch else 0, now, prefix)
        return PutMessageResult(PutMessageStatus.PUT_OK, None, "", run)

    def _too_large(self, size: int, body_size: int) -> PutMessageResult:
        """J counts the whole stored record (header, topic, body, properties) against maxMessageSize."""
        return _fail(
            PutMessageStatus.MESSAGE_ILLEGAL,
            f"message size exceeded, msg total size: {size}, msg body size: {body_size}, "
            f"maxMessageSize: {self.max_message_size}",
        )

    # -- one message -----------------------------------------------------------------------------------------------

    def append_one(self, req: PutRequest) -> PutMessageResult:
        """Append one message: refused while the disk is full, checked against the limits, encoded once with its
        final offsets, written with one ``pwrite`` and handed to the dispatcher. One clock reading serves the
        free-space probe and the store timestamp.

        A message with an IPv6 born or store host is encoded by the record module's general encoder
        (``encode_message``: 16-byte addresses, sysFlag 0x10 / 0x20 set), measured first; the official C++ client
        reads hosts as IPv4 whatever the flags say, so the broker should hand IPv4 hosts in when it can."""
        clock = self._clock()
        if self.disk_full or not self.next_probe - 2.0 <= clock < self.next_probe:
            refused = self.disk_refusal(clock)
            if refused is not None:
                return refused
        topic = req.topic
        topic_block = self._topics.get(topic)
        if topic_block is None:
            topic_block = self._topic_block(topic)
            if topic_block is None:
                return _fail(PutMessageStatus.MESSAGE_ILLEGAL, f"message topic length too long {len(topic.encode())}")
        born_block = self._born.get(req.born_host, b"")  # None: an IPv6 host
        if born_block == b"":
            born_block = self._born_block(req.born_host)
        body = req.body
        blen = len(body)
        props_text = cast(str, req.properties)  # text: ``MessageStore.append`` encodes a dict
        props_b = props_text.encode()
        plen = len(props_b)
        if plen > MAX_PROPERTIES_BYTES:
            return _fail(PutMessageStatus.PROPERTIES_SIZE_EXCEEDED, f"message properties length too long {plen}")
        if plen <= self._seal_max:  # the trailer's name follows (a separator first when they do not end with one)
            if not props_b or props_b[-1] == 2:
                trailer = _TRAILER
                plen += _TRAILER_ADDS
            else:
                trailer = _SEP_TRAILER
                plen += _SEP_TRAILER_ADDS
        else:
            trailer = b""  # unsealed: no room in the int16 properties length
        size = FIXED_SIZE_V4 - 1 + len(topic_block) + blen + plen
        if size > self.max_message_size:
            return self._too_large(size, blen)
        store_block = self._store_block
        place: RecordPlace | None = None  # the general encoder's offsets and time (IPv6 hosts), set below
        if born_block is None or store_block is None:
            place = RecordPlace(0, 0, 0, self.store_host, props_b, None, trailer != b"")
            size = len(encode_message(req, place))
            if size > self.max_message_size:
                return self._too_large(size, blen)
        if size > self.commitlog.max_record_size:
            return _fail(PutMessageStatus.MESSAGE_ILLEGAL, f"message size {size} over a commit-log file")
        queue_id = req.queue_id
        sys_flag = req.sys_flag & ~_V6_BITS
        dispatch = not sys_flag & _NOT_DISPATCHED_BIT
        qoff = self.queue_offsets.get((topic, queue_id), 0) if dispatch else 0
        mf = self.commitlog.writable(size)
        phys = mf.start + mf.wrote
        now = int(clock * 1000)  # _now, inlined
        if now < self.last_store_ts:
            now = self.last_store_ts
        self.last_store_ts = now
        if born_block is not None and store_block is not None:
            data = _encode_v4(
                size, _crc32(body), queue_id, req.flag, qoff, phys, sys_flag, req.born_timestamp, born_block, now,
                store_block, req.reconsume_times, req.prepared_transaction_offset, body, topic_block, props_b, trailer,
            )  # fmt: skip
        else:  # an IPv6 host: measured above
            assert place is not None
            place.queue_offset, place.physical_offset, place.store_timestamp = qoff, phys, now
            data = bytes(encode_message(req, place))
        return self._commit(mf, data, req, qoff, [size], [props_text])

    # -- a batch ---------------------------------------------------------------------------------------------------

    def append_batch(self, req: BatchPutRequest) -> PutMessageResult:
        """A batch for one queue: consecutive queue offsets, one write. All or nothing: one bad message refuses
        the whole batch. The records are encoded straight from the received body (``BatchView``: items of another
        kind are encoded into one first) by ``encode_records_v4``, each item's properties string as received with
        the store's trailer spliced on: nothing is parsed or re-encoded."""
        clock = self._clock()
        if self.disk_full or not self.next_probe - 2.0 <= clock < self.next_probe:
            refused = self.disk_refusal(clock)
            if refused is not None:
                return refused
        topic, queue_id, items = req.topic, req.queue_id, req.items
        if not items:
            return _fail(PutMessageStatus.MESSAGE_ILLEGAL, "no message to put")
        topic_block = self._topic_block(topic)
        if topic_block is None:
            return _fail(PutMessageStatus.MESSAGE_ILLEGAL, f"message topic length too long {len(topic.encode())}")
        born_block = self._born_block(req.born_host)
        store_block = self._store_block
        sys_flag = req.sys_flag & ~_V6_BITS
        if born_block is None or store_block is None:
            return self._batch_generic(req)
        if isinstance(items, BatchView):
            view = items
        else:
            for it in items:
                n = len(it.text.encode())
                if n > MAX_PROPERTIES_BYTES:
                    return _fail(PutMessageStatus.PROPERTIES_SIZE_EXCEEDED, f"message properties length too long {n}")
            view = scan_batch(encode_batch(items))
        max_size = self.max_message_size
        seal_max = self._seal_max
        fixed = FIXED_SIZE_V4 - 1 + len(topic_block)
        src = view.payload
        spans = view.spans
        sizes: list[int] = []
        seals: list[bytes] = []  # the seal's name per record (empty: unsealed)
        total = 0
        for i in range(len(view.flags)):
            bs = spans[3 * i]
            ps = spans[3 * i + 1]
            pe = spans[3 * i + 2]
            plen = pe - ps
            if plen <= seal_max:  # the trailer's name follows, as for one message
                trailer = _TRAILER if not plen or src[pe - 1] == 2 else _SEP_TRAILER
                plen += len(trailer) + _DIGITS
            else:
                trailer = b""
            seals.append(trailer)
            # J counts the whole stored record against maxMessageSize, the integrity trailer included
            size = fixed + ps - 2 - bs + plen
            if size > max_size:
                return self._too_large(size, ps - 2 - bs)
            sizes.append(size)
            total += size
        if total > self.commitlog.max_record_size:
            return _fail(PutMessageStatus.MESSAGE_ILLEGAL, f"batch size {total} over a commit-log file")
        dispatch = not sys_flag & _NOT_DISPATCHED_BIT
        qoff0 = self.queue_offsets.get((topic, queue_id), 0) if dispatch else 0
        mf = self.commitlog.writable(total)
        phys0 = mf.start + mf.wrote
        now = self._now(clock)
        run = RecordRun(
            queue_id, qoff0, 1 if dispatch else 0, phys0, sys_flag, req.born_timestamp, born_block, now, store_block,
            topic_block,
        )  # fmt: skip
        data = _encode_run(run, src, spans, view.flags, sizes, seals)
        texts = cast(list[Properties], view.texts)  # the view's own list: nothing mutates it
        return self._commit(mf, data, req, qoff0, sizes, texts)

    def _batch_generic(self, req: BatchPutRequest) -> PutMessageResult:
        """A batch with an IPv6 host: message by message through ``append_one`` (its general encoder; rare, not one
        write)."""
        items = req.items
        for it in items:  # refuse the whole batch before writing any of it
            if len(it.body) > self.max_message_size:
                return _fail(PutMessageStatus.MESSAGE_ILLEGAL, f"message body size {len(it.body)} over max value")
            if len(it.text.encode()) > MAX_PROPERTIES_BYTES:
                return _fail(PutMessageStatus.PROPERTIES_SIZE_EXCEEDED, "message properties length too long")
        results: list[AppendResult] = []
        for it in items:
            one = PutRequest(
                req.topic, req.queue_id, it.flag, req.sys_flag, req.born_timestamp, req.born_host, it.body, it.text
            )
            res = self.append_one(one)
            if res.status is not PutMessageStatus.PUT_OK:
                return res if not results else PutMessageResult(res.status, results, res.remark)
            results.extend(res.items)
        return PutMessageResult(PutMessageStatus.PUT_OK, results)
