"""Request-reply (RIP-16, J 4.6+) on the client: the requester's table of requests awaiting their reply, the
handler of the broker's PUSH_REPLY_MESSAGE_TO_CLIENT (326) that answers them, and the responder's
``create_reply_message``.

How a request travels (``Producer.request``):

1. the requester sends an ordinary message with properties ``CORRELATION_ID`` (a fresh UUID), ``REPLY_TO_CLIENT``
   (its client id) and ``TTL`` (the timeout, ms), and registers a future under the correlation id here;
2. the broker stores it with ``CLUSTER=<cluster>``; a consumer gets it and answers with
   ``create_reply_message(request, body)`` → topic ``<cluster>_REPLY_TOPIC``, ``MSG_TYPE=reply`` and the three
   properties copied, which the producer sends as SEND_REPLY_MESSAGE_V2 (325);
3. that broker pushes the reply (326) to the connection of the producer whose client id is ``REPLY_TO_CLIENT``
   (the requester heartbeats its producer group to every broker); ``on_push`` completes the future (adding
   ``ARRIVE_TIME``) and answers SUCCESS. A reply nobody waits for (late, or unknown id) is logged and dropped.
"""

from __future__ import annotations

import asyncio
import time
import uuid
import zlib

from client._log import get_logger
from client.errors import MQClientError
from client.message import Message
from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import ReplyMessageRequestHeader
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey, decode_properties
from protocol.record import SYSFLAG_COMPRESSED
from protocol.remoting.handler import RequestContext
from protocol.rules import REPLY_MESSAGE_FLAG, reply_topic

_log = get_logger("rocketq.client.reply")

CREATE_REPLY_MESSAGE_EXCEPTION = 10007  # J ClientErrorCode


def new_correlation_id() -> str:
    """J ``CorrelationIdUtil.createCorrelationId``: a random UUID."""
    return str(uuid.uuid4())


def request_properties(correlation_id: str, client_id: str, timeout_ms: int) -> dict[str, str]:
    """The properties J's ``prepareSendRequest`` adds to a request message."""
    return {
        PropertyKey.CORRELATION_ID: correlation_id,
        PropertyKey.REPLY_TO_CLIENT: client_id,
        PropertyKey.TTL: str(timeout_ms),
    }


def create_reply_message(request: MessageExt, body: bytes) -> Message:
    """J ``MessageUtil.createReplyMessage``: the reply to ``request`` (send it with any started ``Producer``).
    Raises MQClientError when the request has no ``CLUSTER`` property (it did not come through a broker that
    stamps it)."""
    props = request.properties
    cluster = props.get(PropertyKey.CLUSTER)
    if cluster is None:
        raise MQClientError(
            f"create reply message fail, requestMessage error, property[{PropertyKey.CLUSTER}] is null.",
            f"CODE: {CREATE_REPLY_MESSAGE_EXCEPTION}",
        )
    reply_props = {PropertyKey.MSG_TYPE: REPLY_MESSAGE_FLAG}
    for key in (PropertyKey.CORRELATION_ID, PropertyKey.REPLY_TO_CLIENT, PropertyKey.TTL):
        value = props.get(key)
        if value is not None:
            reply_props[key] = value
    return Message(reply_topic(cluster), body, properties=reply_props)


def is_reply(props: dict[str, str]) -> bool:
    """A message to send as SEND_REPLY_MESSAGE_V2 (``MSG_TYPE=reply``)."""
    return props.get(PropertyKey.MSG_TYPE) == REPLY_MESSAGE_FLAG


def _host(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    try:
        return host, int(port)
    except ValueError:
        return text, 0


def reply_from_push(h: ReplyMessageRequestHeader, body: bytes, arrived_ms: int) -> MessageExt:
    """J ``ClientRemotingProcessor.receiveReplyMessage``: the reply as a message (body inflated if compressed)."""
    if h.sys_flag & SYSFLAG_COMPRESSED:
        try:
            body = zlib.decompress(body)
        except zlib.error as exc:
            _log.warning("reply body does not inflate; kept as sent", error=str(exc))
    props = decode_properties(h.properties or "")
    props[PropertyKey.ARRIVE_TIME] = str(arrived_ms)
    return MessageExt(
        topic=h.topic,
        body=body,
        flag=h.flag,
        properties=props,
        queue_id=h.queue_id,
        sys_flag=h.sys_flag,
        born_timestamp=h.born_timestamp,
        born_host=_host(h.born_host),
        store_timestamp=h.store_timestamp,
        store_host=_host(h.store_host),
        reconsume_times=h.reconsume_times or 0,
    )


class ReplyFutures:
    """Correlation id → the future of a request awaiting its reply (J ``RequestFutureHolder``), per client instance
    (replies arrive on its connections). Whoever registers a future removes it (``discard``) when done waiting."""

    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Future[MessageExt]] = {}

    def __len__(self) -> int:
        return len(self._waiting)

    def register(self, correlation_id: str) -> asyncio.Future[MessageExt]:
        fut: asyncio.Future[MessageExt] = asyncio.get_running_loop().create_future()
        self._waiting[correlation_id] = fut
        return fut

    def discard(self, correlation_id: str) -> None:
        self._waiting.pop(correlation_id, None)

    def complete(self, msg: MessageExt) -> bool:
        """Hand ``msg`` to the request it answers; False when none waits for it."""
        cid = msg.properties.get(PropertyKey.CORRELATION_ID, "")
        fut = self._waiting.pop(cid, None)
        if fut is None or fut.done():
            _log.warning(
                "reply message matches no waiting request",
                correlation_id=cid,
                born_host=f"{msg.born_host[0]}:{msg.born_host[1]}",
            )
            return False
        fut.set_result(msg)
        return True

    async def on_push(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        """The PUSH_REPLY_MESSAGE_TO_CLIENT handler: SUCCESS once the reply is handed over (J answers SUCCESS for a
        reply nobody waits for too); a header that does not decode → SYSTEM_ERROR "process reply message fail"."""
        try:
            h = ReplyMessageRequestHeader.from_ext_fields(cmd.ext_fields)
        except ValueError as exc:
            _log.warning("reply push does not decode", error=str(exc), broker=ctx.conn.peer)
            return cmd.make_response(ResponseCode.SYSTEM_ERROR, "process reply message fail")
        self.complete(reply_from_push(h, cmd.body, int(time.time() * 1000)))
        return cmd.make_response()
