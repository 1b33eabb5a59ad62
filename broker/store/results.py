"""Put/get statuses and result objects of the store (the broker maps them onto ResponseCodes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from protocol.message_ext import MessageExt
from protocol.record_decode import decode_records

# the prefix of every put refusal controller mode sets (``broker.ha.replicas``); the send reply shows those reasons
CONTROLLER_REFUSAL = "controller mode: "


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
    """A batch's offset msgIds, comma-joined: ``msg_id`` of each (same format), without a property call each: the
    ids' bytes (host, then the offset's int64) joined, then one ``hex`` with a comma between ids, one ``upper``."""
    prefix = bytes.fromhex(items[0].msg_id_prefix)
    raw = b"".join([prefix + i.wrote_offset.to_bytes(8, "big") for i in items])
    return raw.hex(",", len(prefix) + 8).upper()


def _offset_hex(offset: int) -> str:
    """``f"{offset:016X}"`` for a commit-log offset (0 ≤ offset < 2**63), the offset msgId's tail: its int64 as
    uppercase hex. Compiled, the bytes' ``hex()`` costs a third of the general format spec's machinery (sent once
    per send's reply)."""
    return offset.to_bytes(8, "big").hex().upper()


@dataclass(slots=True, init=False)  # its own __init__: compiled (a dataclass's generated one runs interpreted)
class PutMessageResult:
    status: PutMessageStatus
    items: list[AppendResult]
    remark: str

    def __init__(self, status: PutMessageStatus, items: list[AppendResult] | None = None, remark: str = "") -> None:
        self.status = status
        self.items = items if items is not None else []
        self.remark = remark

    @property
    def ok(self) -> bool:
        return self.status is PutMessageStatus.PUT_OK


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
