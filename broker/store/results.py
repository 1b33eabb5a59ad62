"""Put/get statuses and result objects of the store (the broker maps them onto ResponseCodes)."""

from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass, field
from enum import Enum
from itertools import accumulate

from protocol.message_ext import MessageExt
from protocol.record_decode import decode_records

# the prefix of every put refusal controller mode sets (``broker.ha.replicas``); the send reply shows those reasons
CONTROLLER_REFUSAL = "controller mode: "
_LITTLE = sys.byteorder == "little"


class PutMessageStatus(Enum):
    PUT_OK = 0
    FLUSH_DISK_TIMEOUT = 1
    FLUSH_SLAVE_TIMEOUT = 2
    SLAVE_NOT_AVAILABLE = 3
    SERVICE_NOT_AVAILABLE = 4
    CREATE_MAPEDFILE_FAILED = 5
    MESSAGE_ILLEGAL = 6
    PROPERTIES_SIZE_EXCEEDED = 7
    OS_PAGECACHE_BUSY = 8
    UNKNOWN_ERROR = 9


class GetMessageStatus(Enum):
    FOUND = 0
    NO_MATCHED_MESSAGE = 1
    MESSAGE_WAS_REMOVING = 2
    OFFSET_FOUND_NULL = 3
    OFFSET_OVERFLOW_BADLY = 4
    OFFSET_OVERFLOW_ONE = 5
    OFFSET_TOO_SMALL = 6
    NO_MATCHED_LOGIC_QUEUE = 7
    NO_MESSAGE_IN_QUEUE = 8


@dataclass(slots=True, init=False)  # its own __init__: compiled (a dataclass's generated one runs interpreted)
class AppendResult:
    """Where one message landed. ``queue_offset`` is 0 for a message that is not dispatched (transaction prepared
    or rollback)."""

    wrote_offset: int  # physical (commit-log) offset
    size: int
    queue_id: int
    queue_offset: int
    store_timestamp: int
    msg_id_prefix: str = field(repr=False)  # hex of the store host (ip + port), see protocol.msg_id

    def __init__(
        self, wrote_offset: int, size: int, queue_id: int, queue_offset: int, store_timestamp: int, msg_id_prefix: str
    ) -> None:
        self.wrote_offset = wrote_offset
        self.size = size
        self.queue_id = queue_id
        self.queue_offset = queue_offset
        self.store_timestamp = store_timestamp
        self.msg_id_prefix = msg_id_prefix

    @property
    def msg_id(self) -> str:
        """The offset msgId (``MessageDecoder.createMessageId``), built on demand."""
        return self.msg_id_prefix + _offset_hex(self.wrote_offset)


def joined_msg_ids(items: list[AppendResult]) -> str:
    """A batch's offset msgIds, comma-joined: ``msg_id`` of each (same format), without a property call each. The
    general form (any list of results); a batch the store appended in one write answers with
    :meth:`AppendRun.msg_ids`; both go through ``_joined_ids``."""
    return _joined_ids(items[0].msg_id_prefix, array("q", [i.wrote_offset for i in items]))


def _joined_ids(prefix: str, offsets: array[int]) -> str:
    """The offset msgIds of records at ``offsets`` (all from one host, ``prefix``), comma-joined: the offsets packed
    as big-endian int64s, one ``hex`` with a comma every 8 bytes, then the host part put before each id by one
    ``replace``. Byte-swaps ``offsets`` in place on a little-endian machine."""
    if _LITTLE:
        offsets.byteswap()
    prefix = prefix.upper()
    return prefix + offsets.tobytes().hex(",", 8).upper().replace(",", "," + prefix)


class AppendRun:
    """Where the messages of one batch append landed, as columns: consecutive records of ``sizes`` from commit-log
    offset ``phys`` (ending at ``end``), queue offsets from ``queue_offset`` by ``step`` (0: not dispatched), one
    store timestamp. No object per message: :meth:`results` builds the AppendResults when someone asks for them,
    the send reply takes :meth:`msg_ids` (one pass over the packed offsets)."""

    def __init__(
        self,
        phys: int,
        end: int,
        sizes: list[int],
        queue_id: int,
        queue_offset: int,
        step: int,
        store_timestamp: int,
        msg_id_prefix: str,
    ) -> None:
        self.phys = phys
        self.end = end
        self.sizes = sizes
        self.queue_id = queue_id
        self.queue_offset = queue_offset
        self.step = step
        self.store_timestamp = store_timestamp
        self.msg_id_prefix = msg_id_prefix

    def first(self) -> AppendResult:
        return AppendResult(
            self.phys, self.sizes[0], self.queue_id, self.queue_offset, self.store_timestamp, self.msg_id_prefix
        )

    def results(self) -> list[AppendResult]:
        """One AppendResult per message, in order."""
        phys, qoff, step = self.phys, self.queue_offset, self.step
        queue_id, now, prefix = self.queue_id, self.store_timestamp, self.msg_id_prefix
        out: list[AppendResult] = []
        for size in self.sizes:
            out.append(AppendResult(phys, size, queue_id, qoff, now, prefix))
            phys += size
            qoff += step
        return out

    def msg_ids(self) -> str:
        """The messages' offset msgIds, comma-joined (``joined_msg_ids`` of :meth:`results`), from the offsets
        computed in one ``accumulate``, no result object each."""
        offsets = array("q", accumulate(self.sizes, initial=self.phys))
        offsets.pop()  # the end of the last record
        return _joined_ids(self.msg_id_prefix, offsets)


def _offset_hex(offset: int) -> str:
    """``f"{offset:016X}"`` for a commit-log offset (0 ≤ offset < 2**63), the offset msgId's tail: its int64 as
    uppercase hex. Compiled, the bytes' ``hex()`` costs a third of the general format spec's machinery (sent once
    per send's reply)."""
    return offset.to_bytes(8, "big").hex().upper()


class PutMessageResult:
    """A put's status and where its messages landed: ``items`` (one AppendResult each), or for a batch appended in
    one write its ``run`` (columns; ``items`` is built from it on first use). The send path reads ``count``,
    ``first``, ``end_offset``, ``stored_bytes`` and ``msg_ids`` (the reply's msgId), which need no ``items``."""

    def __init__(
        self,
        status: PutMessageStatus,
        items: list[AppendResult] | None = None,
        remark: str = "",
        run: AppendRun | None = None,
    ) -> None:
        self.status = status
        self._items = items
        self.remark = remark
        self.run = run

    @property
    def items(self) -> list[AppendResult]:
        items = self._items
        if items is None:
            items = self._items = self.run.results() if self.run is not None else []
        return items

    @property
    def ok(self) -> bool:
        return self.status is PutMessageStatus.PUT_OK

    @property
    def count(self) -> int:
        """How many messages were stored."""
        run = self.run
        if run is not None:
            return len(run.sizes)
        return len(self._items) if self._items is not None else 0

    def first(self) -> AppendResult:
        """The first message's result (the put stored at least one)."""
        run = self.run
        return run.first() if run is not None else self.items[0]

    @property
    def end_offset(self) -> int:
        """The commit-log offset just after the last stored record (what a flush or a replica must reach)."""
        run = self.run
        if run is not None:
            return run.end
        last = self.items[-1]
        return last.wrote_offset + last.size

    @property
    def stored_bytes(self) -> int:
        """The stored records' total size."""
        run = self.run
        if run is not None:
            return run.end - run.phys
        return sum([i.size for i in self.items])

    def msg_ids(self) -> str:
        """The reply's msgId: the message's offset msgId, or a batch's comma-joined."""
        run = self.run
        if run is not None:
            return run.msg_ids() if len(run.sizes) > 1 else run.first().msg_id
        items = self.items
        return items[0].msg_id if len(items) == 1 else joined_msg_ids(items)

    def __repr__(self) -> str:
        return f"PutMessageResult(status={self.status!r}, items={self.items!r}, remark={self.remark!r})"


@dataclass(slots=True)
class GetMessageResult:
    status: GetMessageStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    buffer: bytes = b""
    message_count: int = 0
    queue_offsets: list[int] = field(default_factory=list)

    def messages(self) -> list[MessageExt]:
        return decode_records(self.buffer)


@dataclass(frozen=True, slots=True)
class ConsumeQueueUnit:
    """One 20-byte consume-queue unit (see ``consume_queue.py``)."""

    phys_offset: int  # commit-log offset of the message
    size: int  # its record size in the commit log
    tags_code: int  # hash of its TAGS (0 without tags)


@dataclass(frozen=True, slots=True)
class ConsumeQueueSlice:
    """A read of raw units from one consume queue (QUERY_CONSUME_QUEUE): the queue's live range and the units from
    the requested index on (empty when the index is outside the live range)."""

    min_offset: int
    max_offset: int
    units: list[ConsumeQueueUnit] = field(default_factory=list)
