"""Result and status types returned by producers and consumers."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from client.message import MessageQueue
from protocol.message_ext import MessageExt


class SendStatus(Enum):
    SEND_OK = 0
    FLUSH_DISK_TIMEOUT = 1
    FLUSH_SLAVE_TIMEOUT = 2
    SLAVE_NOT_AVAILABLE = 3


@dataclass(frozen=True, slots=True)
class SendResult:
    send_status: SendStatus
    msg_id: str  # the UNIQ_KEY (client id) of the message; comma-joined for a batch
    offset_msg_id: str  # the broker's offset id(s)
    message_queue: MessageQueue
    queue_offset: int
    transaction_id: str | None = None
    region_id: str = "DefaultRegion"  # the broker's regionId (ext MSG_REGION)
    trace_on: bool = True  # the broker's traceOn (ext TRACE_ON): J traces a send only when it is true

    @property
    def status(self) -> SendStatus:
        return self.send_status


class PullStatus(Enum):
    FOUND = 0
    NO_NEW_MSG = 1
    NO_MATCHED_MSG = 2
    OFFSET_ILLEGAL = 3


@dataclass(slots=True)
class PullResult:
    status: PullStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    msg_found_list: list[MessageExt] = field(default_factory=list)


class ConsumeResult(Enum):
    """What a push listener returns. Orderly listeners may also return SUSPEND_CURRENT_QUEUE_A_MOMENT."""

    SUCCESS = "CONSUME_SUCCESS"
    RECONSUME_LATER = "RECONSUME_LATER"
    SUSPEND_CURRENT_QUEUE_A_MOMENT = "SUSPEND_CURRENT_QUEUE_A_MOMENT"

    CONSUME_SUCCESS = "CONSUME_SUCCESS"  # J's name, an alias


class LocalTransactionState(Enum):
    COMMIT_MESSAGE = 8
    ROLLBACK_MESSAGE = 12
    UNKNOW = 0
