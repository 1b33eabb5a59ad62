"""``Producer.request`` / ``request_async``: RPC over messages (request-reply, RIP-16; J
``DefaultMQProducerImpl.request``). The protocol and the responder's side are in ``client.reply``.

A request is an ordinary send of ``msg`` plus ``CORRELATION_ID`` / ``REPLY_TO_CLIENT`` / ``TTL``, after which the
requester waits for the reply the broker pushes back on its connection. The timeout covers both: the send gets what
is left of it, the wait the rest.

| outcome                             | raised (J's text)                                                                 |
|-------------------------------------|-----------------------------------------------------------------------------------|
| the send fails                      | ``MQClientError("send request message to <topic> fail")``, the send's error as cause |
| no reply within the timeout         | ``ReplyTimeoutError("send request message to <topic> OK, but wait reply message timeout, <ms> ms.")`` |
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from client.errors import MQClientError, RemotingError, ReplyTimeoutError
from client.message import Message, MessageQueue
from client.reply import new_correlation_id, request_properties
from protocol.message_ext import MessageExt

if TYPE_CHECKING:
    from client.instance import ClientInstance
    from client.producer.producer import QueueSelectorFn
    from client.results import SendResult


def _timeout_error(topic: str, timeout: float) -> ReplyTimeoutError:
    return ReplyTimeoutError(
        f"send request message to {topic} OK, but wait reply message timeout, {int(timeout * 1000)} ms."
    )


class Where(TypedDict, total=False):
    """Where a request goes, as for ``Producer.send``: a fixed ``queue``, or ``selector(queues, msg, arg)``."""

    queue: MessageQueue
    selector: QueueSelectorFn
    arg: Any


class RequestReply:
    """The request-reply half of ``Producer`` (a mixin: it needs ``instance`` and ``send``)."""

    instance: ClientInstance

    if TYPE_CHECKING:
        send: Callable[..., Awaitable[SendResult]]  # Producer.send

    async def request(self, msg: Message, timeout: float = 3.0, **where: Unpack[Where]) -> MessageExt:
        """Send ``msg`` and return the reply a consumer sends back (``client.reply.create_reply_message``) within
        ``timeout`` seconds. ``queue=`` or ``selector=(queues, msg, arg) → queue`` with ``arg=`` pin its queue."""
        fut = await self.request_async(msg, timeout, **where)
        return await fut

    async def request_async(
        self, msg: Message, timeout: float = 3.0, **where: Unpack[Where]
    ) -> asyncio.Future[MessageExt]:
        """Send ``msg`` as a request and return, once the broker stored it, a future of its reply: it fails with
        ``ReplyTimeoutError`` when no reply came within ``timeout`` seconds of the call."""
        started = time.monotonic()
        correlation_id = new_correlation_id()
        props = dict(msg.properties)
        props.update(request_properties(correlation_id, self.instance.client_id, int(timeout * 1000)))
        request = Message(msg.topic, msg.body, msg.tags, msg.keys, props, msg.flag, msg.delay_level, msg.wait_store_ok)
        replies = self.instance.replies
        fut = replies.register(correlation_id)
        try:
            await self.send(request, timeout=timeout, **where)
        except (RemotingError, MQClientError) as exc:
            replies.discard(correlation_id)
            raise MQClientError(f"send request message to {msg.topic} fail") from exc
        except BaseException:
            replies.discard(correlation_id)
            raise
        left = timeout - (time.monotonic() - started)
        loop = asyncio.get_running_loop()

        def expire() -> None:
            replies.discard(correlation_id)
            if not fut.done():
                fut.set_exception(_timeout_error(msg.topic, timeout))

        if fut.done():
            return fut
        handle = loop.call_later(max(left, 0.0), expire)

        def done(_f: asyncio.Future[MessageExt]) -> None:
            handle.cancel()
            replies.discard(correlation_id)

        fut.add_done_callback(done)
        return fut
