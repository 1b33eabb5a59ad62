"""SEND_MESSAGE (10, long header names — C++), SEND_MESSAGE_V2 (310, one-letter names — J, ali-ons) and
SEND_BATCH_MESSAGE (320) (J ``SendMessageProcessor``).

Checks, in J's order, and their replies:

======================================================= ================= =============================================
check                                                   code              remark
======================================================= ================= =============================================
queued longer than waitTimeMillsInSendQueue (fast fail) SYSTEM_BUSY       [TIMEOUT_CLEAN_QUEUE]broker busy, start flow
                                                                          control for a while, period in queue: Nms,
                                                                          size of queue: n
broker not writeable (brokerPermission)                 NO_PERMISSION     the broker[ip] sending message is forbidden
topic blank / illegal characters / longer than 127      SYSTEM_ERROR      TopicValidator's text
SCHEDULE_TOPIC_XXXX, RMQ_SYS_TRANS_HALF_TOPIC, …        NO_PERMISSION     Sending message to topic[t] is forbidden.
unknown topic, auto-create impossible                   TOPIC_NOT_EXIST   topic[t] not exist, apply first please!
topic not writeable                                     NO_PERMISSION     the topic[t] sending message is forbidden
queueId ≥ writeQueueNums                                SYSTEM_ERROR      request queueId[n] is illegal, topic:… …
body larger than maxMessageSize                         MESSAGE_ILLEGAL   the message body size over max value, MAX: n
batch to a %RETRY% topic / batch with a delay level     MESSAGE_ILLEGAL   J's remarks
======================================================= ================= =============================================

A batch is a SEND_BATCH_MESSAGE or any send whose header says ``batch=true``: J's SendMessageProcessor decides by
the header flag, and the C++ client 1.2 sends its batches as SEND_MESSAGE (10) with ``batch=true``. A negative
queueId picks a queue at random. Unknown topics are auto-created from ``defaultTopic`` (TBW102) with
min(defaultTopicQueueNums, TBW102's writeQueueNums) queues and, as J does, registered with the name servers before
the first send to them is stored and answered (``TopicConfigTable.registered``: one round for a burst of creations).
A message with property DELAY > 0 is diverted to SCHEDULE_TOPIC_XXXX queue level-1 with REAL_TOPIC/REAL_QID
(``ScheduleService``); TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS to the timer (``TimerService``, its
refusals are its table). The UNIQ_KEY property and the compress bit of sysFlag are stored as sent. A single message
also gets properties CLUSTER, MSG_REGION and TRACE_ON (``broker.stamp``), as RocketMQ 5 stores it. Batch messages do
not, as in RocketMQ 5 (whose batch encoder writes each message's own properties).

The queue-wait check is J's ``BrokerFastFailure``: under overload the event loop falls behind, and a send that has
waited longer than the client would still wait for is answered SYSTEM_BUSY at once, without touching the store, so
the broker sheds load instead of growing its backlog. The clients retry SYSTEM_BUSY (J, after a back-off).

The success reply (also for FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE, which clients treat as a
send with another status) carries ext ``msgId`` (offset msgId; comma-joined for a batch), ``queueId``,
``queueOffset`` (the first one for a batch), ``MSG_REGION`` and ``TRACE_ON`` — all strings.

With SYNC_FLUSH (and no SYNC_MASTER wait) a send that must wait for its fsync does not suspend: it puts without
waiting, registers a ``_FlushedReply`` with the group commit and returns it (a ``DeferredReply``); the group
commit's release builds the reply (PUT_OK, or FLUSH_DISK_TIMEOUT after ``syncFlushTimeout``) and the connection
writes it — no Task per send.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Awaitable, Callable

from broker import topics as T
from broker.handlers._common import check_send_allowed, decode_header
from broker.services.access import topic_send_refusal
from broker.services.broker_stats import BrokerStats, message_type
from broker.services.schedule import ScheduleService
from broker.services.timer import TimerRejected
from broker.services.topic_config import TopicConfigTable
from broker.stamp import BrokerStamp
from broker.store.message_store import MessageStore
from broker.store.request import PutRequest
from broker.store.results import CONTROLLER_REFUSAL, PutMessageResult, PutMessageStatus, joined_msg_ids
from protocol.batch import decode_batch
from protocol.bodies import TopicConfig
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import SEND_V2_AS_V1, SendMessageRequestHeader
from protocol.message_properties import PropertyKey
from protocol.record import TRANSACTION_PREPARED_TYPE, TRANSACTION_ROLLBACK_TYPE, RecordError
from protocol.remoting.handler import DeferredReply, Handler, HandlerError, RequestContext

# stores a prepared send as a transaction half message (TransactionHandlers.send_half), with its decoded header
HalfSender = Callable[[RequestContext, RemotingCommand, SendMessageRequestHeader], Awaitable[RemotingCommand]]

_DELAY_MARK = PropertyKey.DELAY + "\x01"
_TIMER_MARK = "TIMER_"  # TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS (RocketMQ 5 timer messages)
_NO_WAIT_MARK = PropertyKey.WAIT + "\x01false"

# PutMessageStatus name → (response code, remark); None remark = success-like (reply carries the send result).
_PUT_STATUS: dict[str, tuple[ResponseCode, str | None]] = {
    "PUT_OK": (ResponseCode.SUCCESS, None),
    "FLUSH_DISK_TIMEOUT": (ResponseCode.FLUSH_DISK_TIMEOUT, None),
    "FLUSH_SLAVE_TIMEOUT": (ResponseCode.FLUSH_SLAVE_TIMEOUT, None),
    "SLAVE_NOT_AVAILABLE": (ResponseCode.SLAVE_NOT_AVAILABLE, None),
    "CREATE_MAPEDFILE_FAILED": (ResponseCode.SYSTEM_ERROR, "create mapped file failed, server is busy or broken."),
    "CREATE_MAPPED_FILE_FAILED": (ResponseCode.SYSTEM_ERROR, "create mapped file failed, server is busy or broken."),
    "MESSAGE_ILLEGAL": (
        ResponseCode.MESSAGE_ILLEGAL,
        "the message is illegal, maybe msg body or properties length not matched. msg body length limit 4M,"
        " msg properties length limit 32k.",
    ),
    "PROPERTIES_SIZE_EXCEEDED": (
        ResponseCode.MESSAGE_ILLEGAL,
        "the message is illegal, maybe msg body or properties length not matched. msg body length limit 4M,"
        " msg properties length limit 32k.",
    ),
    "SERVICE_NOT_AVAILABLE": (
        ResponseCode.SERVICE_NOT_AVAILABLE,
        "service not available now. It may be caused by one of the following reasons: the broker's disk is full,"
        " messages are put to the slave, message store has been shut down, etc.",
    ),
    "OS_PAGECACHE_BUSY": (ResponseCode.SYSTEM_ERROR, "[PC_SYNCHRONIZED]broker busy, start flow control for a while"),
    "UNKNOWN_ERROR": (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR"),
}


def _with_reason(remark: str, reason: str) -> str:
    """J's fixed remark, plus the store's reason when it is controller mode's fence (a stale or lease-less master,
    a slave of the controller): the operator sees why; other reasons keep J's text exactly."""
    return f"{remark} ({reason})" if reason.startswith(CONTROLLER_REFUSAL) else remark


class _FlushedReply(DeferredReply):
    """A SYNC_FLUSH send's reply, built when the group commit answers (``flushed``)."""

    __slots__ = ("_batch", "_cmd", "_h", "_handlers", "_result")

    def __init__(
        self,
        handlers: SendHandlers,
        cmd: RemotingCommand,
        h: SendMessageRequestHeader,
        batch: bool,
        result: PutMessageResult,
    ) -> None:
        super().__init__()
        self._handlers = handlers
        self._cmd = cmd
        self._h = h
        self._batch = batch
        self._result = result

    def flushed(self, durable: bool) -> None:
        handlers = self._handlers
        stats = handlers._stats
        if stats is not None:
            stats.send_inflight -= 1
        result = self._result
        if not durable:
            result.status = PutMessageStatus.FLUSH_DISK_TIMEOUT
            result.remark = "flush disk timeout"
        cmd = self._cmd
        try:
            reply = handlers._reply(cmd, self._h, self._batch, result)
        except HandlerError as exc:
            reply = cmd.make_response(exc.code, exc.remark)
        except Exception as exc:  # a bug here must still answer, or the request stays in flight
            reply = cmd.make_response(ResponseCode.SYSTEM_ERROR, f"{type(exc).__name__}: {exc}")
        self.resolve(reply)


class SendHandlers:
    def __init__(
        self,
        store: MessageStore,
        topics: TopicConfigTable,
        schedule: ScheduleService,
        *,
        broker_ip: str,
        broker_permission: int,
        region_id: str,
        trace_on: bool,
        max_message_size: int,
        max_queue_wait_ms: int = 200,
        stats: BrokerStats | None = None,
        stamp: BrokerStamp | None = None,
    ) -> None:
        self._stats = stats
        self._stamp = stamp
        self._max_wait_s = max_queue_wait_ms / 1000
        self._store = store
        self._topics = topics
        self._schedule = schedule
        self._broker_ip = broker_ip
        self._writeable = T.is_writeable(broker_permission)
        self._region = region_id
        self._trace_on = "true" if trace_on else "false"
        self.max_message_size = max_message_size
        # topic → the TopicConfig that passed the topic checks (name, send-forbidden, exists, writeable). A hit counts
        # only while the table still holds that very object (configs are frozen: every change puts a new one); a
        # table change empties it too, so deleted topics do not stay in it.
        self._checked: dict[str, TopicConfig] = {}
        self._fresh: set[str] = set()  # topics this handler auto-created whose registration no send awaited yet
        topics.add_listener(self._checked.clear)
        # the loop's clock, looked up on the first send (asyncio.get_running_loop() costs a getpid per call)
        self._loop_time: Callable[[], float] | None = None
        # where a prepared (transaction half) SEND_MESSAGE(_V2) goes; None: stored like any send
        self.half: HalfSender | None = None

    def set_broker_permission(self, perm: int) -> None:
        """``brokerPermission`` changed at runtime (UPDATE_BROKER_CONFIG): J reads it on every request."""
        self._writeable = T.is_writeable(perm)

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.SEND_MESSAGE: self.send,
            RequestCode.SEND_MESSAGE_V2: self.send,
            RequestCode.SEND_BATCH_MESSAGE: self.send,
        }

    # -- the shared path ---------------------------------------------------------------------------------------

    def _check(self, ctx: RequestContext, h: SendMessageRequestHeader) -> TopicConfig:
        tc = self._checked.get(h.topic)
        if tc is None or not self._writeable or self._topics.get(h.topic) is not tc:
            tc = self._check_topic(ctx, h)
        if h.queue_id >= tc.write_queue_nums:
            raise HandlerError(
                ResponseCode.SYSTEM_ERROR,
                f"request queueId[{h.queue_id}] is illegal, topic:{h.topic} topicConfig.writeQueueNums:"
                f"{tc.write_queue_nums} consumer:{ctx.conn.peer}",
            )
        return tc

    def checked_topic(self, ctx: RequestContext, h: SendMessageRequestHeader) -> TopicConfig:
        """The topic's config after every check a send makes (reply sends make them too); raises HandlerError."""
        return self._check(ctx, h)

    def _check_topic(self, ctx: RequestContext, h: SendMessageRequestHeader) -> TopicConfig:
        """The per-topic checks (all but the queue id), in J's order; a pass is remembered in ``_checked``."""
        topic = h.topic
        check_send_allowed(topic, writeable=self._writeable, broker_ip=self._broker_ip)
        tc = self._topics.get(topic)
        if tc is None:
            tc = self._topics.create_in_send(
                topic, h.default_topic, h.default_topic_queue_nums, 0, producer=ctx.conn.peer
            )
            if tc is None and topic.startswith(T.RETRY_PREFIX):
                tc = self._topics.create_if_absent(topic, 1, T.PERM_RW)
            if tc is None:
                raise HandlerError(ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please!")
            self._fresh.add(topic)
        refusal = topic_send_refusal(topic, tc.perm)
        if refusal is not None:
            raise HandlerError(*refusal)
        if self._topics.get(topic) is tc:
            self._checked[topic] = tc
        return tc

    async def send(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | DeferredReply:
        """The handler of all three send codes: one coroutine per request (no middleware around it), the header
        decoded once; a prepared SEND_MESSAGE(_V2) goes to ``half`` (the transaction handlers)."""
        code = cmd.code
        if code == RequestCode.SEND_MESSAGE_V2:
            h = decode_header(SEND_V2_AS_V1, cmd)
            batch = h.batch
        elif code == RequestCode.SEND_MESSAGE:
            h = decode_header(SendMessageRequestHeader, cmd)
            batch = h.batch
        else:
            ext = cmd.ext_fields
            h = decode_header(SEND_V2_AS_V1 if "b" in ext or "a" in ext else SendMessageRequestHeader, cmd)
            batch = True
        if (
            code != RequestCode.SEND_BATCH_MESSAGE
            and h.sys_flag & TRANSACTION_ROLLBACK_TYPE == TRANSACTION_PREPARED_TYPE
            and self.half is not None
        ):
            if (
                self._stamp is not None
            ):  # a half message is stamped like any single send (J: the committed copy has them)
                h = dataclasses.replace(h, properties=self._stamp.apply(h.properties or ""))
            stats = self._stats
            if stats is None:
                return await self.half(ctx, cmd, h)
            stats.send_inflight += 1
            try:
                return await self.half(ctx, cmd, h)
            finally:
                stats.send_inflight -= 1
        clock = self._loop_time
        if clock is None:
            clock = self._loop_time = asyncio.get_running_loop().time
        waited = clock() - ctx.received_at
        if waited > self._max_wait_s and ctx.received_at:
            raise HandlerError(
                ResponseCode.SYSTEM_BUSY,
                f"[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: "
                f"{int(waited * 1000)}ms, size of queue: {ctx.conn.in_flight}",
            )
        if self._store.puts_refused is not None:  # a slave, or a master catching up from one: before auto-create
            code, remark = _PUT_STATUS["SERVICE_NOT_AVAILABLE"]
            raise HandlerError(code, _with_reason(remark or "", self._store.puts_refused))
        tc = self._check(ctx, h)
        if self._fresh and h.topic in self._fresh:
            self._fresh.discard(h.topic)
            await self._topics.registered()  # J registers an auto-created topic before answering its first send
        queue_id = h.queue_id if h.queue_id >= 0 else random.randrange(max(tc.write_queue_nums, 1))
        if len(cmd.body) > self.max_message_size:
            raise HandlerError(
                ResponseCode.MESSAGE_ILLEGAL, f"the message body size over max value, MAX: {self.max_message_size}"
            )
        born_host = ctx.conn.peer
        gc = self._store.sync_flush_only
        if batch:
            if h.topic.startswith(T.RETRY_PREFIX):
                raise HandlerError(
                    ResponseCode.MESSAGE_ILLEGAL, f"batch request does not support retry group {h.topic}"
                )
            try:
                items = decode_batch(cmd.body)
            except RecordError as exc:
                raise HandlerError(ResponseCode.MESSAGE_ILLEGAL, f"bad batch body: {exc}") from None
            if not items:
                raise HandlerError(ResponseCode.MESSAGE_ILLEGAL, "batch body holds no message")
            for item in items:  # properties parsed only when one may name a delay
                if _DELAY_MARK in item.text and item.properties.get(PropertyKey.DELAY, "0") not in ("", "0"):
                    raise HandlerError(ResponseCode.MESSAGE_ILLEGAL, "batch message does not support delay message")
            wait = True
            put = self._store.put_messages(
                h.topic, queue_id, h.sys_flag, h.born_timestamp, born_host, items, wait=wait and gc is None
            )
        else:
            topic, qid, props = h.topic, queue_id, h.properties or ""
            if self._stamp is not None:
                props = self._stamp.apply(props)
            if _DELAY_MARK in props or _TIMER_MARK in props:  # cheap substring tests; divert() parses
                try:
                    topic, qid, props = self._schedule.divert(h.topic, queue_id, props)
                except TimerRejected as exc:
                    raise HandlerError(exc.code, exc.remark) from None
            wait = _NO_WAIT_MARK not in props
            put = self._store.put_message(
                PutRequest(
                    topic,
                    qid,
                    h.flag,
                    h.sys_flag,
                    h.born_timestamp,
                    born_host,
                    cmd.body,
                    props,
                    h.reconsume_times or 0,
                ),
                wait=wait and gc is None,
            )
        stats = self._stats
        if gc is not None:  # never suspends: the put does not wait, the group commit answers the reply
            result = await put
            if wait and result.status is PutMessageStatus.PUT_OK:
                last = result.items[-1]
                deferred = _FlushedReply(self, cmd, h, batch, result)
                if gc.request_callback(last.wrote_offset + last.size, deferred.flushed):
                    if stats is not None:
                        stats.send_inflight += 1
                    return deferred
        elif stats is None:
            result = await put
        else:  # J's send-queue length: a send counts while it waits (it cannot be seen by anyone before)
            stats.send_inflight += 1
            try:
                result = await put
            finally:
                stats.send_inflight -= 1
        return self._reply(cmd, h, batch, result)

    def _reply(
        self, cmd: RemotingCommand, h: SendMessageRequestHeader, batch: bool, result: PutMessageResult
    ) -> RemotingCommand:
        """The reply to a send whose put ended with ``result`` (raises HandlerError for a failed put)."""
        stats = self._stats
        status = result.status
        if status is PutMessageStatus.PUT_OK:  # an identity test: Enum.name and Enum.__hash__ are Python calls
            code, remark = ResponseCode.SUCCESS, None
        else:
            code, remark = _PUT_STATUS.get(status.name, (ResponseCode.SYSTEM_ERROR, status.name))
            if remark is not None and result.remark:
                remark = _with_reason(remark, result.remark)
        if remark is not None:
            raise HandlerError(code, remark)
        items_put = result.items
        first = items_put[0]
        single = len(items_put) == 1
        if stats is not None:  # once per request: messages, stored bytes, J's message_type label
            size = first.size if single else sum(i.size for i in items_put)
            stats.on_put(h.topic, "normal" if batch else message_type(h.properties or ""), len(items_put), size)
        ext = {
            "msgId": first.msg_id if single else joined_msg_ids(items_put),
            "queueId": str(first.queue_id),
            "queueOffset": str(first.queue_offset),
            "MSG_REGION": self._region,
            "TRACE_ON": self._trace_on,
        }
        return cmd.make_response(code, None, ext)
