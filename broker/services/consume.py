"""ConsumeService: what a consumer's read must pass before the store is asked, decided once for both front ends. The
remoting PULL handler (``broker.handlers.pull``) and the gRPC endpoint's receive, ack, change-invisible and
dead-letter RPCs (``broker.proxy.service``) translate their wire into one ``ConsumeRequest``, call ``check`` and
translate a ``ConsumeRefused`` back into their wire; the read itself is one ``GetRequest`` with the subscription's
filter (``ConsumeRequest.read``), which the PULL handler and the POP service (``broker.proxy.pop_service``) hand the store.

Checks, in J's order (``PullMessageProcessor``; J's POP path makes the same ones), each a ``ConsumeRefused`` with the
remoting code and J's remark and a ``ConsumeRefusal`` saying which check it was (what the gRPC endpoint maps to its
own codes):

=================================== ================== ============================ =================================
check                               refusal            code                         remark
=================================== ================== ============================ =================================
broker not readable                 BROKER_UNREADABLE  NO_PERMISSION                the broker[ip] pulling message is
(``brokerPermission``)                                                              forbidden
group unknown, auto-create off      NO_GROUP           SUBSCRIPTION_GROUP_NOT_EXIST subscription group [g] does not
                                                                                    exist
group ``consumeEnable=false``       GROUP_DISABLED     NO_PERMISSION                subscription group no
                                                                                    permission, g
topic unknown                       NO_TOPIC           TOPIC_NOT_EXIST              topic[t] not exist, apply first
                                                                                    please!
topic not readable                  TOPIC_UNREADABLE   NO_PERMISSION                the topic[t] pulling message is
                                                                                    forbidden
queue id ≥ readQueueNums            QUEUE_ID           SYSTEM_ERROR                 queueId[n] is illegal, …
expression does not parse           BAD_SUBSCRIPTION   SUBSCRIPTION_PARSE_FAILED    parse the consumer's subscription
(``subscription``)                                                                  failed
*a pull that names no subscription (``pull_read``): its group's, from the heartbeats*
consumer group not registered       NO_CONSUMER        SUBSCRIPTION_NOT_EXIST       the consumer's group info not exist
broadcasting, group forbids it      NO_BROADCAST       NO_PERMISSION                the consumer group[g] can not
                                                                                    consume by broadcast way
topic not subscribed                NO_SUBSCRIPTION    SUBSCRIPTION_NOT_EXIST       the consumer's subscription not
                                                                                    exist
registered sub older than the pull  STALE_SUBSCRIPTION SUBSCRIPTION_NOT_LATEST      the consumer's subscription not
                                                                                    latest
*any pull's SQL92 subscription (``pull_read``)*
SQL92 that did not compile          NO_FILTER_DATA     FILTER_DATA_NOT_EXIST        The broker's consumer filter data
                                                                                    is not exist!…
``enablePropertyFilter=false``      NO_PROPERTY_FILTER SYSTEM_ERROR                 The broker does not support
                                                                                    consumer to filter message by t
=================================== ================== ============================ =================================

A request that does not read (``reading=False``: an ack, a change of invisibility, a dead-letter of a handle) passes
the group and topic-existence checks only; ``queue_id`` None (a POP over every queue) skips the queue check. A
request that names its subscription (``expression``: a PULL with the SUBSCRIPTION flag) has it compiled as the last
check, and ``Consumable.subscription`` is the result (None: it names none). ``pull_read`` is a PULL's whole check:
``check``, then the subscription it filters with (named, else its group's registered one) and the SQL92 checks, and
the store's read through that subscription's filter.
Parsed expressions are kept per (topic, expression, type), so a pull that names its subscription does not parse it
again.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from broker import topics as T
from broker.filter import SubscriptionParseError, build_subscription
from broker.services.client_registry import ClientRegistry, CompiledSubscription
from broker.services.subscription_groups import SubscriptionGroupConfig, SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from broker.store.request import GetRequest, MessageFilter
from protocol.bodies import TopicConfig
from protocol.codes import ResponseCode
from protocol.headers import PULL_FLAG_SUBSCRIPTION, PullMessageRequestHeader

_SUB_CACHE_MAX = 4096
PARSE_FAILED = "parse the consumer's subscription failed"


class ConsumeRefusal(enum.Enum):
    """Which check refused a consumer's request (the table in the module docstring)."""

    BROKER_UNREADABLE = enum.auto()
    NO_GROUP = enum.auto()
    GROUP_DISABLED = enum.auto()
    NO_TOPIC = enum.auto()
    TOPIC_UNREADABLE = enum.auto()
    QUEUE_ID = enum.auto()
    BAD_SUBSCRIPTION = enum.auto()
    NO_CONSUMER = enum.auto()
    NO_BROADCAST = enum.auto()
    NO_SUBSCRIPTION = enum.auto()
    STALE_SUBSCRIPTION = enum.auto()
    NO_FILTER_DATA = enum.auto()
    NO_PROPERTY_FILTER = enum.auto()


# each refusal's remoting code and J's remark (the module docstring's table)
_REFUSALS: Final[dict[ConsumeRefusal, tuple[int, str]]] = {
    ConsumeRefusal.BROKER_UNREADABLE: (ResponseCode.NO_PERMISSION, "the broker[{broker}] pulling message is forbidden"),
    ConsumeRefusal.NO_GROUP: (ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, "subscription group [{group}] does not exist"),
    ConsumeRefusal.GROUP_DISABLED: (ResponseCode.NO_PERMISSION, "subscription group no permission, {group}"),
    ConsumeRefusal.NO_TOPIC: (ResponseCode.TOPIC_NOT_EXIST, "topic[{topic}] not exist, apply first please!"),
    ConsumeRefusal.TOPIC_UNREADABLE: (ResponseCode.NO_PERMISSION, "the topic[{topic}] pulling message is forbidden"),
    ConsumeRefusal.QUEUE_ID: (
        ResponseCode.SYSTEM_ERROR,
        "queueId[{qid}] is illegal, topic:[{topic}] topicConfig.readQueueNums:[{nums}] consumer:[{group}]",
    ),
    ConsumeRefusal.NO_CONSUMER: (ResponseCode.SUBSCRIPTION_NOT_EXIST, "the consumer's group info not exist"),
    ConsumeRefusal.NO_BROADCAST: (
        ResponseCode.NO_PERMISSION,
        "the consumer group[{group}] can not consume by broadcast way",
    ),
    ConsumeRefusal.NO_SUBSCRIPTION: (ResponseCode.SUBSCRIPTION_NOT_EXIST, "the consumer's subscription not exist"),
    ConsumeRefusal.STALE_SUBSCRIPTION: (ResponseCode.SUBSCRIPTION_NOT_LATEST, "the consumer's subscription not latest"),
    ConsumeRefusal.NO_FILTER_DATA: (
        ResponseCode.FILTER_DATA_NOT_EXIST,
        "The broker's consumer filter data is not exist!Your expression may be wrong!",
    ),
    ConsumeRefusal.NO_PROPERTY_FILTER: (
        ResponseCode.SYSTEM_ERROR,
        "The broker does not support consumer to filter message by {kind}",
    ),
}


class ConsumeRefused(Exception):
    """A consumer's request the broker does not serve: ``code`` and ``remark`` are the remoting reply (J's),
    ``reason`` the check, ``detail`` the parser's own words for a BAD_SUBSCRIPTION."""

    def __init__(self, reason: ConsumeRefusal, code: int, remark: str, detail: str = "") -> None:
        super().__init__(remark)
        self.reason = reason
        self.code = code
        self.remark = remark
        self.detail = detail or remark


@dataclass(slots=True)
class ConsumeRequest:
    """One consumer's request on one topic: ``queue_id`` None is every queue (a POP); ``reading`` False for the
    requests about a message already received (ack, change of invisibility, dead-letter). A pull also says where
    its read starts (``offset``) and how many messages it takes at most (``max_msgs``): ``read`` is that read; and
    the subscription it names, if it names one (``expression`` of ``expression_type``; None: it names none)."""

    group: str
    topic: str
    queue_id: int | None = None
    reading: bool = True
    offset: int = 0
    max_msgs: int = 0
    expression: str | None = None
    expression_type: str | None = None
    sub_version: int = 0  # a pull's: the subscription version its consumer has (checked against the registered one)

    @classmethod
    def of_pull(cls, h: PullMessageRequestHeader) -> ConsumeRequest:
        """A PULL_MESSAGE header's request: its group, queue, offset and count, and its subscription when its
        sysFlag says it names one (SUBSCRIPTION; no expression is every message)."""
        names = h.sys_flag & PULL_FLAG_SUBSCRIPTION
        return ConsumeRequest(
            h.consumer_group, h.topic, h.queue_id, True, h.queue_offset, h.max_msg_nums,
            (h.subscription or "*") if names else None, h.expression_type, h.sub_version,
        )  # fmt: skip

    def read(self, max_bytes: int | None, message_filter: MessageFilter | None) -> GetRequest:
        """The store's read of this request's queue from its offset, up to ``max_bytes`` (None: the store's
        limit), through ``message_filter`` (None: every message): what a pull and a POP hand the store."""
        qid = self.queue_id
        assert qid is not None, "a read names its queue"
        return GetRequest(self.group, self.topic, qid, self.offset, self.max_msgs, max_bytes, message_filter)


@dataclass(slots=True)
class Consumable:
    """What passed: the topic's and the group's configs, and the request's named subscription compiled."""

    topic: TopicConfig
    group: SubscriptionGroupConfig
    subscription: CompiledSubscription | None = None


class ConsumeService:
    def __init__(
        self, topics: TopicConfigTable, groups: SubscriptionGroupTable, *, broker_ip: str, broker_permission: int,
        clients: ClientRegistry | None = None, property_filter: bool = False,
    ) -> None:  # fmt: skip
        self._topics = topics
        self._groups = groups
        self._clients = clients  # the registered subscriptions of pulls that name none (None: every such pull fails)
        self._property_filter = property_filter
        self._broker_ip = broker_ip
        self._readable = T.is_readable(broker_permission)
        self._sub_cache: dict[tuple[str, str, str], CompiledSubscription] = {}

    def set_broker_permission(self, perm: int) -> None:
        """``brokerPermission`` changed at runtime (UPDATE_BROKER_CONFIG): J reads it on every pull and POP."""
        self._readable = T.is_readable(perm)

    def check(self, req: ConsumeRequest) -> Consumable:
        """The topic and group ``req`` may use, and its named subscription; raises ConsumeRefused (the table in the
        module docstring)."""
        reading = req.reading
        if reading and not self._readable:
            raise self._refused(ConsumeRefusal.BROKER_UNREADABLE, req)
        group = self._groups.find_or_create(req.group)
        if group is None:
            raise self._refused(ConsumeRefusal.NO_GROUP, req)
        if not group.consume_enable:
            raise self._refused(ConsumeRefusal.GROUP_DISABLED, req)
        tc = self._topics.get(req.topic)
        if tc is None:
            raise self._refused(ConsumeRefusal.NO_TOPIC, req)
        if reading and not T.is_readable(tc.perm):
            raise self._refused(ConsumeRefusal.TOPIC_UNREADABLE, req)
        qid = req.queue_id
        if qid is not None and not 0 <= qid < tc.read_queue_nums:
            raise self._refused(ConsumeRefusal.QUEUE_ID, req, nums=tc.read_queue_nums)
        if req.expression is None:
            return Consumable(tc, group)
        return Consumable(tc, group, self.subscription(req.topic, req.expression, req.expression_type))

    def pull_read(self, req: ConsumeRequest, max_bytes: int | None) -> GetRequest:
        """A pull's read of the store (J's PullMessageProcessor checks): ``check``, then the subscription it filters
        with — the one it names, else its group's from the heartbeats — and the SQL92 checks; raises ConsumeRefused
        (the table in the module docstring)."""
        ok = self.check(req)
        sub = ok.subscription
        if sub is None:
            sub = self._registered(req, ok.group)
        if sub.is_sql:
            if sub.selector is None:
                raise self._refused(ConsumeRefusal.NO_FILTER_DATA, req)
            if not self._property_filter:
                raise self._refused(ConsumeRefusal.NO_PROPERTY_FILTER, req, kind=sub.expression_type)
        return req.read(max_bytes, sub.filter)

    def _registered(self, req: ConsumeRequest, group: SubscriptionGroupConfig) -> CompiledSubscription:
        """The subscription a pull that names none filters with: its consumer group's, from its heartbeats."""
        grp = self._clients.consumer_group(req.group) if self._clients is not None else None
        if grp is None:
            raise self._refused(ConsumeRefusal.NO_CONSUMER, req)
        if not group.consume_broadcast_enable and grp.message_model == "BROADCASTING":
            raise self._refused(ConsumeRefusal.NO_BROADCAST, req)
        sub = grp.subscriptions.get(req.topic)
        if sub is None:
            raise self._refused(ConsumeRefusal.NO_SUBSCRIPTION, req)
        if sub.sub_version < req.sub_version:
            raise self._refused(ConsumeRefusal.STALE_SUBSCRIPTION, req)
        return sub

    def _refused(self, reason: ConsumeRefusal, req: ConsumeRequest, **more: object) -> ConsumeRefused:
        code, remark = _REFUSALS[reason]
        text = remark.format(broker=self._broker_ip, group=req.group, topic=req.topic, qid=req.queue_id, **more)
        return ConsumeRefused(reason, code, text)

    def subscription(self, topic: str, expression: str | None, expression_type: str | None) -> CompiledSubscription:
        """``expression`` (None or blank: every message) of ``expression_type`` (None: TAG) compiled, from the cache
        when it was seen before; raises ConsumeRefused (BAD_SUBSCRIPTION) when it does not parse."""
        expr = expression or "*"
        kind = expression_type or "TAG"
        key = (topic, expr, kind)
        sub = self._sub_cache.get(key)
        if sub is None:
            try:
                sub = build_subscription(topic, expr, 0, kind)
            except SubscriptionParseError as exc:
                raise ConsumeRefused(
                    ConsumeRefusal.BAD_SUBSCRIPTION, ResponseCode.SUBSCRIPTION_PARSE_FAILED, PARSE_FAILED, str(exc)
                ) from None
            if len(self._sub_cache) >= _SUB_CACHE_MAX:
                self._sub_cache.clear()
            self._sub_cache[key] = sub
        return sub
