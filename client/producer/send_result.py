"""A send's result from the broker's reply (``_result``: SendResult with the reply's msgId, queue, offset, regionId
and traceOn; ``STATUS_BY_CODE``: reply code → SendStatus), and ``DirectSend``: a plain send prepared by
``Producer.direct_request`` for a caller that writes the request and reads its reply on its own thread
(``client.sync``'s direct path), with what ``send_direct_again`` needs to redo it."""

from __future__ import annotations

from dataclasses import dataclass

from client.message import MessageQueue
from client.results import SendResult, SendStatus
from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import SendMessageResponseHeader

STATUS_BY_CODE: dict[int, SendStatus] = {
    ResponseCode.SUCCESS: SendStatus.SEND_OK,
    ResponseCode.FLUSH_DISK_TIMEOUT: SendStatus.FLUSH_DISK_TIMEOUT,
    ResponseCode.FLUSH_SLAVE_TIMEOUT: SendStatus.FLUSH_SLAVE_TIMEOUT,
    ResponseCode.SLAVE_NOT_AVAILABLE: SendStatus.SLAVE_NOT_AVAILABLE,
}


@dataclass(slots=True)
class DirectSend:
    """A plain send prepared for a caller's own write (``Producer.direct_request``)."""

    addr: str
    request: RemotingCommand
    mq: MessageQueue
    uniq: str  # the message's UNIQ_KEY; a batch's, comma-joined
    # the prepared send, for ``send_direct_again``
    topic: str
    body: bytes
    sys_flag: int
    props_text: str
    props: dict[str, str] | None
    flag: int
    batch: bool


def send_result(status: SendStatus, uniq: str, mq: MessageQueue, resp: SendMessageResponseHeader) -> SendResult:
    """A send's result from the broker's reply to it on ``mq`` (``uniq``: the message's UNIQ_KEY, "" for none)."""
    return SendResult(  # positionally: send_status, msg_id, offset_msg_id, message_queue, queue_offset, tx id, …
        status,
        uniq or resp.msg_id,
        resp.msg_id,
        mq if resp.queue_id == mq.queue_id else MessageQueue(mq.topic, mq.broker_name, resp.queue_id),
        resp.queue_offset,
        resp.transaction_id,
        resp.msg_region,
        resp.trace_on,
    )
