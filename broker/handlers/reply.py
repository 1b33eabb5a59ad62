"""SEND_REPLY_MESSAGE (324, long header names) and SEND_REPLY_MESSAGE_V2 (325, one-letter names): a responder's
answer to a request-reply request (J ``ReplyMessageProcessor``).

The send checks come first, exactly as for a send (``SendHandlers.checked_topic``: broker writeable, topic name,
forbidden topics, topic exists or is auto-created, writeable, queueId in range); a negative queueId picks a queue at
random. The reply gets MSG_REGION and TRACE_ON (``broker.stamp``; no CLUSTER, as in J). Then the
reply is pushed to the requester (``ReplyService.push``) and, with ``storeReplyMessageEnable``
(default true), also stored in the reply topic.

| outcome                      | reply                                                                               |
|------------------------------|-------------------------------------------------------------------------------------|
| pushed                       | SUCCESS, ext ``msgId`` ``0``, ``queueId``, ``queueOffset`` ``0``                    |
| pushed and stored            | SUCCESS with the stored message's ``msgId``, ``queueId`` and ``queueOffset``        |
| not pushed                   | SYSTEM_ERROR with ``ReplyService``'s remark (the reply is still stored if enabled)  |

Every reply carries ext ``MSG_REGION`` and ``TRACE_ON``, as a send's does.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from broker.handlers._common import decode_header
from broker.services.broker_stats import BrokerStats
from broker.services.reply import ReplyRequest, ReplyService
from broker.stamp import BrokerStamp
from broker.store.message_store import MessageStore
from broker.store.request import PutRequest
from broker.store.results import PutMessageStatus
from protocol.bodies import TopicConfig
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import SEND_V2_AS_V1, SendMessageRequestHeader
from protocol.remoting.handler import Handler, RequestContext

TopicCheck = Callable[[RequestContext, SendMessageRequestHeader], TopicConfig]

_STORED = (
    PutMessageStatus.PUT_OK,
    PutMessageStatus.FLUSH_DISK_TIMEOUT,
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT,
    PutMessageStatus.SLAVE_NOT_AVAILABLE,
)


class ReplyHandlers:
    def __init__(
        self,
        replies: ReplyService,
        store: MessageStore,
        check: TopicCheck,
        *,
        region_id: str,
        trace_on: bool,
        store_reply: bool,
        stamp: BrokerStamp,
        stats: BrokerStats | None = None,
    ) -> None:
        self._stamp = stamp
        self._replies = replies
        self._store = store
        self._check = check
        self._region = region_id
        self._trace_on = "true" if trace_on else "false"
        self.store_reply = store_reply
        self._stats = stats

    def table(self) -> dict[int, Handler]:
        return {RequestCode.SEND_REPLY_MESSAGE: self.send_reply, RequestCode.SEND_REPLY_MESSAGE_V2: self.send_reply}

    async def send_reply(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        cls = SEND_V2_AS_V1 if cmd.code == RequestCode.SEND_REPLY_MESSAGE_V2 else SendMessageRequestHeader
        h = decode_header(cls, cmd)
        h = replace(h, properties=self._stamp.apply(h.properties or ""))
        tc = self._check(ctx, h)
        queue_id = h.queue_id if h.queue_id >= 0 else random.randrange(max(tc.write_queue_nums, 1))
        pushed = await self._replies.push(ReplyRequest(h, queue_id, cmd.body, ctx.conn.peer))
        ext = {"MSG_REGION": self._region, "TRACE_ON": self._trace_on}
        if pushed.ok:
            code, remark = ResponseCode.SUCCESS, None
            ext.update(msgId="0", queueId=str(queue_id), queueOffset="0")
        else:
            code, remark = ResponseCode.SYSTEM_ERROR, pushed.remark
        if self.store_reply:
            req = PutRequest(
                h.topic,
                queue_id,
                h.flag,
                h.sys_flag,
                h.born_timestamp,
                ctx.conn.peer,
                cmd.body,
                h.properties or "",
                h.reconsume_times or 0,
            )
            result = await self._store.put_message(req)
            if result.status in _STORED:
                item = result.items[0]
                ext.update(msgId=item.msg_id, queueId=str(item.queue_id), queueOffset=str(item.queue_offset))
                if self._stats is not None:
                    self._stats.on_put(h.topic, "normal", 1, item.size)
        return cmd.make_response(code, remark, ext)
