"""ReplyService: delivers request-reply answers (RIP-16) to the client that sent the request, as J's
``ReplyMessageProcessor.pushReplyMessage`` does.

The requester is found among the producers connected to *this* broker by its client id (the reply's
``REPLY_TO_CLIENT`` property; J ``ProducerManager.findChannel``), and the reply is pushed to that connection as a
PUSH_REPLY_MESSAGE_TO_CLIENT (326) request whose answer it awaits. Both front ends that accept replies call
``push``; it never raises for a client-side failure, it returns the remark J answers with:

| case                                  | result (``PushResult``)                                               |
|---------------------------------------|-----------------------------------------------------------------------|
| client answered SUCCESS               | ok                                                                    |
| no REPLY_TO_CLIENT property           | ``reply message properties[REPLY_TO_CLIENT] is null``                 |
| no connected producer with that id    | ``push reply message fail, channel of <id> not found.``               |
| the client answered an error / failed | ``push reply message to <id>fail.`` (J's text, no space)              |
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from broker.services.client_registry import ClientRegistry
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import RemotingError
from protocol.headers import ReplyMessageRequestHeader, SendMessageRequestHeader
from protocol.message_properties import PropertyKey, decode_properties, encode_properties

_log = structlog.get_logger("rocketq.broker.reply")

PUSH_TIMEOUT_S = 3.0  # J Broker2Client.callClient: 3 s


@dataclass(frozen=True, slots=True)
class ReplyRequest:
    """A reply a responder sent (SEND_REPLY_MESSAGE(_V2)), as the broker received it."""

    header: SendMessageRequestHeader
    queue_id: int  # the queue the reply is stored in (the header's, or a random one for -1)
    body: bytes
    born_host: str  # the responder's ``ip:port``


@dataclass(frozen=True, slots=True)
class PushResult:
    ok: bool
    remark: str = ""


class ReplyService:
    def __init__(self, clients: ClientRegistry, store_host: Callable[[], str]) -> None:
        self._clients = clients
        self._store_host = store_host  # this broker's ``ip:port`` (the header's storeHost)

    async def push(self, reply: ReplyRequest) -> PushResult:
        """Push ``reply`` to the requesting client's connection and await its answer."""
        h = reply.header
        props = decode_properties(h.properties or "")
        client_id = props.get(PropertyKey.REPLY_TO_CLIENT)
        if client_id is None:
            _log.warning("reply message without REPLY_TO_CLIENT, cannot push it", topic=h.topic)
            return PushResult(False, f"reply message properties[{PropertyKey.REPLY_TO_CLIENT}] is null")
        info = self._clients.find_producer_channel(client_id)
        if info is None:
            remark = f"push reply message fail, channel of <{client_id}> not found."
            _log.warning(remark)
            return PushResult(False, remark)
        props[PropertyKey.PUSH_REPLY_TIME] = str(int(time.time() * 1000))
        push = ReplyMessageRequestHeader(
            producer_group=h.producer_group,
            topic=h.topic,
            default_topic=h.default_topic,
            default_topic_queue_nums=h.default_topic_queue_nums,
            queue_id=h.queue_id,
            sys_flag=h.sys_flag,
            born_timestamp=h.born_timestamp,
            flag=h.flag,
            properties=encode_properties(props),
            reconsume_times=h.reconsume_times,
            unit_mode=h.unit_mode,
            born_host=reply.born_host,
            store_host=self._store_host(),
            store_timestamp=int(time.time() * 1000),
        )
        cmd = RemotingCommand.request(RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, push.to_ext_fields(), reply.body)
        try:
            resp = await info.channel.invoke(cmd, PUSH_TIMEOUT_S)
        except RemotingError as exc:
            _log.warning("push reply message failed", client_id=client_id, peer=info.channel.peer, error=str(exc))
            return PushResult(False, f"push reply message to {client_id}fail.")
        if resp.code != ResponseCode.SUCCESS:
            _log.warning("push reply message refused", client_id=client_id, code=resp.code, remark=resp.remark)
            return PushResult(False, f"push reply message to {client_id}fail.")
        return PushResult(True)
