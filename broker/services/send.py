"""SendService: how the broker stores what a producer sends, decided once for both front ends. The remoting send
handlers (``broker.handlers.send``) and the gRPC endpoint (``broker.proxy``) translate their wire into one
``SendRequest``, call ``send`` and translate the ``SendOutcome`` (or the ``SendRefused``) back into their wire.

Checks, in J's order (``SendMessageProcessor``: ``msgCheck``, then the transaction and size checks), each a
``SendRefused`` with the remoting code and J's remark and a ``Refusal`` saying which check it was (what the gRPC
endpoint maps to its own codes):

======================================================= =================== ================ ======================
check                                                   refusal             code             remark
======================================================= =================== ================ ======================
store refuses puts (a slave, a master catching up)      STORE_UNAVAILABLE   SERVICE_NOT_…    J's remark
broker not writeable (brokerPermission)                 BROKER_READ_ONLY    NO_PERMISSION    the broker[ip] sending
                                                                                             message is forbidden
topic blank / illegal characters / longer than 127      TOPIC_NAME          SYSTEM_ERROR     TopicValidator's text
SCHEDULE_TOPIC_XXXX, RMQ_SYS_TRANS_HALF_TOPIC, …        TOPIC_FORBIDDEN     NO_PERMISSION    Sending message to
                                                                                             topic[t] is forbidden.
any other system topic, when ``client_topics_only``     SYSTEM_TOPIC        SYSTEM_ERROR     topic t is a system
                                                                                             topic
unknown topic, auto-create impossible (or not asked)    NO_TOPIC            TOPIC_NOT_EXIST  topic[t] not exist,
                                                                                             apply first please!
topic not writeable                                     TOPIC_READ_ONLY     NO_PERMISSION    the topic[t] sending
                                                                                             message is forbidden
queueId ≥ writeQueueNums                                QUEUE_ID            SYSTEM_ERROR     request queueId[n] is
                                                                                             illegal, …
prepared message, rejectTransactionMessage              TX_FORBIDDEN        NO_PERMISSION    J's remark
body larger than maxMessageSize                         TOO_LARGE           MESSAGE_ILLEGAL  J's remark
batch to a %RETRY% topic / with a delay / bad / empty   BAD_BATCH           MESSAGE_ILLEGAL  J's remarks
timer message the timer refuses                         TIMER               TimerRejected's  its remark
put failed (``PutMessageStatus`` below)                 PUT_FAILED          the table below  the table below
======================================================= =================== ================ ======================

Unknown topics are auto-created from ``default_topic`` (TBW102) when the request names one (remoting), and, as J
does, registered with the name servers before the first send to them is stored and answered. A negative queue id
is picked: by ``message_group``'s hash when it has one (FIFO), in turn with ``NEXT_QUEUE`` (RocketMQ 5's proxy),
else at random (J's broker). A prepared message (``prepared``) is stored as a transaction half message
(``TransactionService.put_half``); a message with DELAY > 0 or a TIMER_* property is diverted to the schedule or
the timer (``ScheduleService.divert``). A single message (not a batch) gets CLUSTER, MSG_REGION and TRACE_ON
(``broker.stamp``).

The store's status → outcome, once for every front end: the first four are stored (a ``SendOutcome`` with that
remoting code), the others refused (``PUT_FAILED`` with the code and J's fixed remark; ``detail`` keeps the store's
own remark):

=========================== ====================== ================================================================
PutMessageStatus            code                   remark
=========================== ====================== ================================================================
PUT_OK                      SUCCESS                —
FLUSH_DISK_TIMEOUT          FLUSH_DISK_TIMEOUT     —
FLUSH_SLAVE_TIMEOUT         FLUSH_SLAVE_TIMEOUT    —
SLAVE_NOT_AVAILABLE         SLAVE_NOT_AVAILABLE    —
CREATE_MAPPED_FILE_FAILED   SYSTEM_ERROR           create mapped file failed, server is busy or broken.
MESSAGE_ILLEGAL             MESSAGE_ILLEGAL        the message is illegal, maybe msg body or properties length …
PROPERTIES_SIZE_EXCEEDED    MESSAGE_ILLEGAL        (the same)
SERVICE_NOT_AVAILABLE       SERVICE_NOT_AVAILABLE  service not available now. It may be caused by …
OS_PAGECACHE_BUSY           SYSTEM_ERROR           [PC_SYNCHRONIZED]broker busy, start flow control for a while
UNKNOWN_ERROR               SYSTEM_ERROR           UNKNOWN_ERROR
=========================== ====================== ================================================================

With SYNC_FLUSH (and no SYNC_MASTER wait) a caller may ask ``defer``: the put then does not wait for its fsync;
``send`` returns a ``PendingSend`` whose ``then(cb)`` gets the outcome when the group commit has covered it
(FLUSH_DISK_TIMEOUT after ``syncFlushTimeout``) — no Task per send.
"""

from __future__ import annotations

import enum
import itertools
import random
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final, cast

from broker import topics as T
from broker.services.access import send_refusal
from broker.services.broker_stats import BrokerStats, message_type
from broker.services.schedule import ScheduleService
from broker.services.timer import TimerRejected
from broker.services.topic_config import TopicConfigTable
from broker.services.transactions import TransactionService
from broker.stamp import BrokerStamp
from broker.store.message_store import MessageStore
from broker.store.request import BatchPutRequest, PutRequest
from broker.store.results import CONTROLLER_REFUSAL, PutMessageResult, PutMessageStatus
from protocol.batch import scan_batch
from protocol.bodies import TopicConfig
from protocol.codes import ResponseCode
from protocol.headers import SEND_V1_NAMES, WIRE_BOOL, SendMessageRequestHeader
from protocol.message_properties import PropertyKey, java_string_hash
from protocol.record import TRANSACTION_PREPARED_TYPE, TRANSACTION_ROLLBACK_TYPE, RecordError

NEXT_QUEUE: Final = -2  # queue id: the next queue in turn (any other negative id: one at random)

_DELAY_MARK: Final = PropertyKey.DELAY + "\x01"
_TIMER_MARK: Final = "TIMER_"  # TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS (RocketMQ 5 timer messages)
_NO_WAIT_MARK: Final = PropertyKey.WAIT + "\x01false"
_ILLEGAL_REMARK: Final = (
    "the message is illegal, maybe msg body or properties length not matched. msg body length limit 4M,"
    " msg properties length limit 32k."
)
_MAPPED_REMARK: Final = "create mapped file failed, server is busy or broken."

# stored statuses → the remoting code of the reply (the send result's status on the client)
_STORED: Final[dict[PutMessageStatus, int]] = {
    PutMessageStatus.PUT_OK: ResponseCode.SUCCESS,
    PutMessageStatus.FLUSH_DISK_TIMEOUT: ResponseCode.FLUSH_DISK_TIMEOUT,
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT: ResponseCode.FLUSH_SLAVE_TIMEOUT,
    PutMessageStatus.SLAVE_NOT_AVAILABLE: ResponseCode.SLAVE_NOT_AVAILABLE,
}
# refused statuses → (code, J's remark)
_FAILED: Final[dict[PutMessageStatus, tuple[int, str]]] = {
    PutMessageStatus.CREATE_MAPEDFILE_FAILED: (ResponseCode.SYSTEM_ERROR, _MAPPED_REMARK),
    PutMessageStatus.MESSAGE_ILLEGAL: (ResponseCode.MESSAGE_ILLEGAL, _ILLEGAL_REMARK),
    PutMessageStatus.PROPERTIES_SIZE_EXCEEDED: (ResponseCode.MESSAGE_ILLEGAL, _ILLEGAL_REMARK),
    PutMessageStatus.SERVICE_NOT_AVAILABLE: (
        ResponseCode.SERVICE_NOT_AVAILABLE,
        "service not available now. It may be caused by one of the following reasons: the broker's disk is full,"
        " messages are put to the slave, message store has been shut down, etc.",
    ),
    PutMessageStatus.OS_PAGECACHE_BUSY: (
        ResponseCode.SYSTEM_ERROR,
        "[PC_SYNCHRONIZED]broker busy, start flow control for a while",
    ),
    PutMessageStatus.UNKNOWN_ERROR: (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR"),
}


class Refusal(enum.Enum):
    """Which check refused a send (the table in the module docstring)."""

    STORE_UNAVAILABLE = enum.auto()
    BROKER_READ_ONLY = enum.auto()
    TOPIC_NAME = enum.auto()
    TOPIC_FORBIDDEN = enum.auto()
    SYSTEM_TOPIC = enum.auto()
    NO_TOPIC = enum.auto()
    TOPIC_READ_ONLY = enum.auto()
    QUEUE_ID = enum.auto()
    TX_FORBIDDEN = enum.auto()
    TOO_LARGE = enum.auto()
    BAD_BATCH = enum.auto()
    TIMER = enum.auto()
    PUT_FAILED = enum.auto()


def _with_reason(remark: str, reason: str) -> str:
    """J's fixed remark, plus the store's reason when it is controller mode's fence (a stale or lease-less master,
    a slave of the controller): the operator sees why; other reasons keep J's text exactly."""
    return f"{remark} ({reason})" if reason.startswith(CONTROLLER_REFUSAL) else remark


class SendRefused(Exception):
    """A send the broker does not store: ``code`` and ``remark`` are the remoting reply (J's), ``reason`` the
    check; for PUT_FAILED ``status`` is the store's and ``detail`` its own remark."""

    def __init__(
        self,
        reason: Refusal,
        code: int,
        remark: str,
        status: PutMessageStatus | None = None,
        detail: str = "",
    ) -> None:
        super().__init__(remark)
        self.reason = reason
        self.code = code
        self.remark = remark
        self.status = status
        self.detail = detail or remark


class SendRequest(PutRequest):
    """One send as a producer asked for it (a single message, or a batch whose ``body`` is the batch encoding): the
    ``PutRequest`` fields, then how the service is to treat it. A plain single send (no half message, no delay)
    is handed to the store as it is, with its queue and stamped properties filled in: one object per send.

    ``queue_id`` ≥ 0: this queue; negative: the service picks one (``NEXT_QUEUE``: in turn; else at random) and
    writes it here, as it writes ``msg_type``: the request carries what its outcome is built from.
    ``born_host`` also names the producer in remarks and an auto-create's log line. ``properties``: the text as sent
    (a front end translates its wire's into it; a batch: "", each message has its own)."""

    __slots__ = (
        "batch",
        "client_topics_only",
        "default_queue_nums",
        "default_topic",
        "message_group",
        "msg_type",
        "prepared",
    )

    def __init__(
        self,
        topic: str,
        queue_id: int,
        flag: int,
        sys_flag: int,
        born_timestamp: int,
        born_host: str,
        body: bytes,
        properties: str,
        reconsume_times: int = 0,
        *,
        batch: bool = False,
        prepared: bool = False,
        message_group: str = "",
        default_topic: str | None = None,
        default_queue_nums: int = 0,
        client_topics_only: bool = False,
    ) -> None:
        super().__init__(
            topic, queue_id, flag, sys_flag, born_timestamp, born_host, body, properties, reconsume_times
        )  # fmt: skip
        self.batch = batch
        self.prepared = prepared  # a transaction half message
        self.message_group = message_group  # FIFO: the queue is hash(message_group) % writeQueueNums
        self.default_topic = default_topic  # auto-create an unknown topic from this one (None: refused)
        self.default_queue_nums = default_queue_nums
        self.client_topics_only = client_topics_only  # refuse every system topic (5.x clients), not only forbidden
        self.msg_type = "normal"  # J's message_type label of the send's metrics, set by the service

    @classmethod
    def of_header(cls, h: SendMessageRequestHeader, body: bytes, born_host: str, batch: bool) -> SendRequest:
        """The send a remoting header asks for: the header's fields, the frame's ``body`` and the connection's
        ``born_host`` (all a header does not hold). A SEND_MESSAGE(_V2) whose sysFlag says TRANSACTION_PREPARED is
        a half message; the header's ``defaultTopic`` is what an unknown topic is auto-created from."""
        sys_flag = h.sys_flag
        req = cls(
            h.topic, h.queue_id, h.flag, sys_flag, h.born_timestamp, born_host, body, h.properties or "",
            h.reconsume_times or 0,
        )  # fmt: skip
        req.batch = batch
        req.prepared = not batch and sys_flag & TRANSACTION_ROLLBACK_TYPE == TRANSACTION_PREPARED_TYPE
        req.default_topic = h.default_topic
        req.default_queue_nums = h.default_topic_queue_nums
        return req

    @classmethod
    def of_ext_fields(
        cls, d: dict[str, str], names: tuple[str, ...], body: bytes, born_host: str, batch: bool
    ) -> SendRequest:
        """``of_header(header.from_ext_fields(d), body, born_host, batch or header.batch)`` without the header object:
        ``names`` are the send header's wire names in its field order (``SEND_V1_NAMES`` / ``SEND_V2_NAMES``), read
        and checked as its reader does; anything it would not take on its fast path (a missing field, a bad number,
        a rare boolean spelling) goes through the header's own reader, for its exact error or value."""
        get = d.get
        try:
            d[names[0]]  # producerGroup: required, not kept
            rt = get(names[9])
            mrt = get(names[12])
            if mrt:
                int(mrt)
            WIRE_BOOL[get(names[10], "")]
            if WIRE_BOOL[get(names[11], "")]:
                batch = True
            sys_flag = int(d[names[5]])
            req = cls(
                d[names[1]], int(d[names[4]]), int(d[names[7]]), sys_flag, int(d[names[6]]), born_host, body,
                get(names[8]) or "", int(rt) if rt else 0,
            )  # fmt: skip
            req.default_topic = d[names[2]]
            req.default_queue_nums = int(d[names[3]])
        except (KeyError, ValueError):
            reader = SendMessageRequestHeader
            h = reader.from_ext_fields(d) if names is SEND_V1_NAMES else reader.from_v2_ext_fields(d)
            return cls.of_header(h, body, born_host, batch or h.batch)
        req.batch = batch
        req.prepared = not batch and sys_flag & TRANSACTION_ROLLBACK_TYPE == TRANSACTION_PREPARED_TYPE
        return req


@dataclass(slots=True, init=False)  # its own __init__: compiled (a dataclass's generated one runs interpreted)
class SendOutcome:
    """A stored send: ``code`` is the remoting reply code (SUCCESS, or a FLUSH_* / SLAVE_NOT_AVAILABLE the client
    treats as a send with that status), ``queue_id`` the queue to answer, ``result`` the store's items."""

    code: int
    queue_id: int
    result: PutMessageResult

    def __init__(self, code: int, queue_id: int, result: PutMessageResult) -> None:
        self.code = code
        self.queue_id = queue_id
        self.result = result

    @property
    def ok(self) -> bool:
        return self.result.status is PutMessageStatus.PUT_OK


# flushed(outcome): a deferred send's outcome, once the group commit has answered
Flushed = Callable[[SendOutcome], None]


class SendService:
    def __init__(
        self,
        store: MessageStore,
        topics: TopicConfigTable,
        schedule: ScheduleService,
        transactions: TransactionService,
        *,
        broker_ip: str,
        broker_permission: int,
        max_message_size: int,
        stats: BrokerStats | None = None,
        stamp: BrokerStamp | None = None,
        reject_transactions: bool = False,
    ) -> None:
        self._store = store
        self._topics = topics
        self._configs = topics.by_name  # the live table, looked up per send without a call into the table's class
        self._schedule = schedule
        self._tx = transactions
        self._broker_ip = broker_ip
        self._writeable = T.is_writeable(broker_permission)
        self._stats = stats
        self._stamp = stamp
        self.max_message_size = max_message_size
        self.reject_transactions = reject_transactions
        self._rr = itertools.count()
        # topic → the TopicConfig that passed the topic checks (name, send-forbidden, exists, writeable). A hit counts
        # only while the table still holds that very object (configs are frozen: every change puts a new one); a
        # table change empties it too, so deleted topics do not stay in it.
        self._checked: dict[str, TopicConfig] = {}
        self._fresh: set[str] = set()  # topics auto-created here whose registration no send awaited yet
        topics.add_listener(self._checked.clear)

    def set_broker_permission(self, perm: int) -> None:
        """``brokerPermission`` changed at runtime (UPDATE_BROKER_CONFIG): J reads it on every send, on both front
        ends (both call this service)."""
        self._writeable = T.is_writeable(perm)
        self._checked.clear()

    # -- checks --------------------------------------------------------------------------------------------------

    def check(self, req: SendRequest) -> TopicConfig:
        """The topic's config after the topic and queue checks (reply sends make them too); raises SendRefused."""
        tc = self._checked.get(req.topic)
        if tc is None or not self._writeable or self._configs.get(req.topic) is not tc:
            tc = self._check_topic(req)
        elif req.client_topics_only and self._system_topic(req.topic):  # passed before for a remoting send
            raise SendRefused(Refusal.SYSTEM_TOPIC, ResponseCode.SYSTEM_ERROR, f"topic {req.topic} is a system topic")
        if req.queue_id >= tc.write_queue_nums:
            raise SendRefused(
                Refusal.QUEUE_ID,
                ResponseCode.SYSTEM_ERROR,
                f"request queueId[{req.queue_id}] is illegal, topic:{req.topic} topicConfig.writeQueueNums:"
                f"{tc.write_queue_nums} consumer:{req.born_host}",
            )
        return tc

    def _check_topic(self, req: SendRequest) -> TopicConfig:
        """The per-topic checks (all but the queue id), in J's order; a pass is remembered in ``_checked``."""
        topic = req.topic
        refusal = send_refusal(topic, writeable=self._writeable, broker_ip=self._broker_ip)
        if refusal is not None:
            code, remark = refusal
            if not self._writeable:
                reason = Refusal.BROKER_READ_ONLY
            else:
                reason = Refusal.TOPIC_NAME if code == ResponseCode.SYSTEM_ERROR else Refusal.TOPIC_FORBIDDEN
            raise SendRefused(reason, code, remark)
        if req.client_topics_only and self._system_topic(topic):
            raise SendRefused(Refusal.SYSTEM_TOPIC, ResponseCode.SYSTEM_ERROR, f"topic {topic} is a system topic")
        tc = self._topics.get(topic)
        if tc is None:
            if req.default_topic is not None:
                tc = self._topics.create_in_send(
                    topic, req.default_topic, req.default_queue_nums, 0, producer=str(req.born_host)
                )
                if tc is None and topic.startswith(T.RETRY_PREFIX):
                    tc = self._topics.create_if_absent(topic, 1, T.PERM_RW)
            if tc is None:
                raise SendRefused(
                    Refusal.NO_TOPIC, ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please!"
                )
            self._fresh.add(topic)
        if not T.is_writeable(tc.perm):
            raise SendRefused(
                Refusal.TOPIC_READ_ONLY, ResponseCode.NO_PERMISSION, f"the topic[{topic}] sending message is forbidden"
            )
        if self._topics.get(topic) is tc:
            self._checked[topic] = tc
        return tc

    def _system_topic(self, topic: str) -> bool:
        return topic in self._topics.system_topic_names() or topic.startswith(T.SYSTEM_TOPIC_PREFIX)

    # -- send ----------------------------------------------------------------------------------------------------

    async def send(self, req: SendRequest, *, defer: bool = False) -> SendOutcome | PendingSend:
        """Check, store and answer ``req``; raises SendRefused. With ``defer`` (see the module docstring) the
        answer may come later: a ``PendingSend`` is returned."""
        got = self.send_now(req, defer=defer)
        if isinstance(got, (SendOutcome, PendingSend)):
            return got
        return await got

    def send_now(
        self, req: SendRequest, *, defer: bool = False
    ) -> SendOutcome | PendingSend | Coroutine[Any, Any, SendOutcome | PendingSend]:
        """``send`` up to its first suspension: its answer when it has none (the common case, no coroutine made;
        what the remoting handler calls), else the coroutine that finishes it. Raises SendRefused."""
        store = self._store
        if store.puts_refused is not None:  # a slave, or a master catching up from one: before auto-create
            code, remark = _FAILED[PutMessageStatus.SERVICE_NOT_AVAILABLE]
            raise SendRefused(Refusal.STORE_UNAVAILABLE, code, _with_reason(remark, store.puts_refused))
        tc = self.check(req)
        if req.queue_id < 0:  # the service picks the queue, from the checked topic's write queues
            n = max(tc.write_queue_nums, 1)
            if req.message_group:
                req.queue_id = abs(java_string_hash(req.message_group)) % n
            elif req.queue_id == NEXT_QUEUE:
                req.queue_id = next(self._rr) % n
            else:
                req.queue_id = random.randrange(n)
        if self._fresh and req.topic in self._fresh:
            return self._registered_first(req, defer)
        return self._stored(req, defer)

    async def _registered_first(self, req: SendRequest, defer: bool) -> SendOutcome | PendingSend:
        """J registers an auto-created topic with the name servers before answering its first send."""
        self._fresh.discard(req.topic)
        await self._topics.registered()
        got = self._stored(req, defer)
        if isinstance(got, (SendOutcome, PendingSend)):
            return got
        return await got

    def _stored(self, req: SendRequest, defer: bool) -> SendOutcome | PendingSend | Coroutine[Any, Any, SendOutcome]:
        """The checked send's put (its queue picked): its outcome, or the coroutine awaiting a put that waits (a
        half message, a put waiting for durability)."""
        store = self._store
        if req.prepared and self.reject_transactions:
            raise SendRefused(
                Refusal.TX_FORBIDDEN,
                ResponseCode.NO_PERMISSION,
                f"the broker[{self._broker_ip}] sending transaction message is forbidden",
            )
        queue_id = req.queue_id
        if len(req.body) > self.max_message_size:
            raise SendRefused(
                Refusal.TOO_LARGE,
                ResponseCode.MESSAGE_ILLEGAL,
                f"the message body size over max value, MAX: {self.max_message_size}",
            )
        put: PutRequest | BatchPutRequest
        if req.batch:
            put = self._batch(req)
            wait = True
        else:  # the properties text stamped (broker.stamp), J's metrics label taken from it
            props = cast(str, req.properties)  # a single message's properties are text (the front ends' translation)
            req.msg_type = message_type(props)
            if self._stamp is not None:
                props = self._stamp.apply(props)
            if req.prepared:  # put_half moves it on to the half queue
                put = req.moved(req.topic, queue_id, props)
            elif _DELAY_MARK in props or _TIMER_MARK in props:  # cheap substring tests; divert() parses
                try:
                    topic, qid, props = self._schedule.divert(req.topic, queue_id, props)
                except TimerRejected as exc:
                    raise SendRefused(Refusal.TIMER, exc.code, exc.remark) from None
                put = req.moved(topic, qid, props)  # the outcome and its metrics keep the topic sent to
            else:  # the common case: the request itself is the store's request
                req.properties = props
                put = req
            wait = _NO_WAIT_MARK not in props
        gc = store.sync_flush_only if defer and wait else None
        if req.prepared and isinstance(put, PutRequest):  # answered when it is durable
            stored = self._tx.put_half(put)
        elif gc is None and wait and store.waits_for_durability:  # answered when it is durable (or replicated)
            stored = store.put_message(put)
        else:  # the append is all there is to await
            result = store.append(put)
            if gc is not None and result.status is PutMessageStatus.PUT_OK:  # the group commit answers
                pending = PendingSend(self, req, result)
                if gc.request_callback(result.end_offset, pending.flushed):
                    if self._stats is not None:
                        self._stats.send_inflight += 1
                    return pending
            return self.outcome(req, result)
        return self._awaited(req, stored)

    async def _awaited(self, req: SendRequest, put: Awaitable[PutMessageResult]) -> SendOutcome:
        """The outcome of a put that waits, ``put`` awaited as J's send-queue length counts it: a send counts while
        it waits."""
        stats = self._stats
        if stats is None:
            return self.outcome(req, await put)
        stats.send_inflight += 1
        try:
            result = await put
        finally:
            stats.send_inflight -= 1
        return self.outcome(req, result)

    def _batch(self, req: SendRequest) -> BatchPutRequest:
        """The batch's messages (decoded from its body), checked as J checks a batch."""
        if req.topic.startswith(T.RETRY_PREFIX):
            raise SendRefused(
                Refusal.BAD_BATCH,
                ResponseCode.MESSAGE_ILLEGAL,
                f"batch request does not support retry group {req.topic}",
            )
        try:
            items = scan_batch(req.body)
        except RecordError as exc:
            raise SendRefused(Refusal.BAD_BATCH, ResponseCode.MESSAGE_ILLEGAL, f"bad batch body: {exc}") from None
        if not items:
            raise SendRefused(Refusal.BAD_BATCH, ResponseCode.MESSAGE_ILLEGAL, "batch body holds no message")
        for i, text in enumerate(items.texts):  # properties parsed only when one may name a delay
            if _DELAY_MARK in text and items[i].properties.get(PropertyKey.DELAY, "0") not in ("", "0"):
                raise SendRefused(
                    Refusal.BAD_BATCH, ResponseCode.MESSAGE_ILLEGAL, "batch message does not support delay message"
                )
        return BatchPutRequest(req.topic, req.queue_id, req.sys_flag, req.born_timestamp, req.born_host, items)

    def outcome(self, req: SendRequest, result: PutMessageResult) -> SendOutcome:
        """The outcome of a put that ended with ``result`` (raises SendRefused for a failed put); counts it."""
        status = result.status
        if status is PutMessageStatus.PUT_OK:  # an identity test: Enum.__hash__ is a Python call
            code: int = ResponseCode.SUCCESS
        else:
            stored = _STORED.get(status)
            if stored is None:
                code, remark = _FAILED.get(status, (ResponseCode.SYSTEM_ERROR, status.name))
                if result.remark:
                    remark = _with_reason(remark, result.remark)
                raise SendRefused(Refusal.PUT_FAILED, code, remark, status, result.remark or status.name)
            code = stored
        count = result.count
        if not count:
            raise SendRefused(Refusal.PUT_FAILED, ResponseCode.SYSTEM_ERROR, status.name, status)
        stats = self._stats
        if stats is not None:  # once per request: messages, stored bytes, J's message_type label
            stats.on_put(req.topic, req.msg_type, count, result.stored_bytes)
        return SendOutcome(code, req.queue_id if req.prepared else result.first().queue_id, result)


class PendingSend:
    """A stored send waiting for the group commit's fsync (``send`` with ``defer``): ``then(cb)`` gets its outcome
    once the group commit has answered."""

    __slots__ = ("_outcome", "_req", "_result", "_service", "_then")

    def __init__(self, service: SendService, req: SendRequest, result: PutMessageResult) -> None:
        self._service = service
        self._req = req
        self._result = result
        self._then: Flushed | None = None
        self._outcome: SendOutcome | None = None

    def then(self, cb: Flushed) -> None:
        if self._outcome is not None:
            cb(self._outcome)
        else:
            self._then = cb

    def flushed(self, durable: bool) -> None:
        service = self._service
        stats = service._stats
        if stats is not None:
            stats.send_inflight -= 1
        result = self._result
        if not durable:
            result.status = PutMessageStatus.FLUSH_DISK_TIMEOUT
            result.remark = "flush disk timeout"
        outcome = self._outcome = service.outcome(self._req, result)
        if self._then is not None:
            self._then(outcome)
