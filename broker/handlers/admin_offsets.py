"""Consumer-progress administration (J ``AdminBrokerProcessor``, 4.9.7): who consumes a topic, the raw offset
tables, cloning a group's offsets, broker-wide consume stats and per-queue consume time spans.

QUERY_TOPIC_CONSUME_BY_WHO (300), header ``topic``
    GroupList ``{"groupList":[g,…]}`` (sorted): the groups with a consumer online that subscribes the topic, plus
    the groups with committed offsets on it. An unknown topic gives an empty list (J).
GET_ALL_CONSUMER_OFFSET (43), no header
    the consumer offset table in ``consumerOffset.json``'s format (``ConsumerOffsetTable.encode``), compact:
    ``{"offsetTable":{"<topic>@<group>":{"<queueId>":<offset>,…},…}}``. J's fastjson leaves the queue ids
    unquoted; fastjson (a J slave syncing from this master) and ``loads_lenient`` read both.
GET_ALL_DELAY_OFFSET (45), no header
    the delay-level progress in ``delayOffset.json``'s format (``ScheduleService.encode``), compact:
    ``{"offsetTable":{"<level>":<next queue offset>,…}}``.
CLONE_GROUP_OFFSET (314), header srcGroup, destGroup, topic, offline
    for ``topic``, or for every topic ``srcGroup`` has offsets on when ``topic`` is absent or empty: skip topics not
    configured here and, unless ``offline``, topics that ``srcGroup``'s online consumers do not subscribe; then
    ``destGroup``'s offsets on the topic become a copy of ``srcGroup``'s (replacing its own). SUCCESS, no body,
    also when nothing was copied (J). J 4.9.7 passes the header's topic rather than the loop's to ``cloneOffset``,
    so its "every topic" form copies nothing; here it copies each topic.
GET_BROKER_CONSUME_STATS (317), header isOrder
    ConsumeStatsList ``{"brokerAddr":"ip:port","consumeStatsList":[{"<group>":[<ConsumeStats>,…]},…],
    "totalDiff":N}``: for every subscription group (also those with nothing to show: an empty list), one
    ConsumeStats per configured topic the group has offsets on, over the topic's write queues (J), ordered topics
    only when ``isOrder``; ``totalDiff`` = Σ (brokerOffset - consumerOffset). The per-topic figures come from
    ``admin_stats.ConsumeStatsBuilder``, as GET_CONSUME_STATS's do.
QUERY_CONSUME_TIME_SPAN (303), header topic, group
    QueryConsumeTimeSpanBody ``{"consumeTimeSpanSet":[{"consumeTimeStamp","delayTime","maxTimeStamp",
    "messageQueue":{"brokerName","queueId","topic"},"minTimeStamp"},…]}``, one per write queue; unknown topic →
    TOPIC_NOT_EXIST "topic[t] not exist". Per queue, as J computes it:

    | field            | value                                                                                  |
    |------------------|----------------------------------------------------------------------------------------|
    | minTimeStamp     | store time of the queue's first live message (-1: none)                                |
    | maxTimeStamp     | store time of the message at max offset - 1 (-1: none)                                 |
    | consumeTimeStamp | committed offset c > 0: store time of the message at c - 1; else minTimeStamp          |
    | delayTime        | c < max offset: now - store time of the message at c (J reads offset -1 as time -1     |
    |                  | when nothing is committed, giving now + 1); else 0                                     |
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from broker.handlers._common import decode_header
from broker.handlers.admin_stats import ConsumeStatsBuilder
from broker.services.client_registry import ClientRegistry
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.schedule import ScheduleService
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from broker.store.message_store import MessageStore
from protocol.bodies import (
    ConsumeStats,
    ConsumeStatsList,
    GroupList,
    MessageQueue,
    QueryConsumeTimeSpanBody,
    QueueTimeSpan,
)
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import (
    CloneGroupOffsetRequestHeader,
    GetConsumeStatsInBrokerHeader,
    QueryConsumeTimeSpanRequestHeader,
    QueryTopicConsumeByWhoRequestHeader,
)
from protocol.remoting.handler import Handler, HandlerError, RequestContext

_log = structlog.get_logger("rocketq.broker.admin")


class AdminOffsetsHandlers:
    def __init__(
        self,
        store: MessageStore,
        topics: TopicConfigTable,
        groups: SubscriptionGroupTable,
        offsets: ConsumerOffsetTable,
        clients: ClientRegistry,
        schedule: ScheduleService,
        consume_stats: ConsumeStatsBuilder,
        *,
        broker_name: str,
        broker_addr: Callable[[], str],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._topics = topics
        self._groups = groups
        self._offsets = offsets
        self._clients = clients
        self._schedule = schedule
        self._consume_stats = consume_stats
        self._broker_name = broker_name
        self._broker_addr = broker_addr
        self._clock = clock

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.QUERY_TOPIC_CONSUME_BY_WHO: self.topic_consume_by_who,
            RequestCode.GET_ALL_CONSUMER_OFFSET: self.all_consumer_offsets,
            RequestCode.GET_ALL_DELAY_OFFSET: self.all_delay_offsets,
            RequestCode.CLONE_GROUP_OFFSET: self.clone_group_offset,
            RequestCode.GET_BROKER_CONSUME_STATS: self.broker_consume_stats,
            RequestCode.QUERY_CONSUME_TIME_SPAN: self.consume_time_span,
        }

    async def topic_consume_by_who(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(QueryTopicConsumeByWhoRequestHeader, cmd)
        online = {g for g, info in self._clients.consumer_groups().items() if h.topic in info.subscriptions}
        groups = online | self._offsets.groups_of_topic(h.topic)
        return cmd.make_response(body=GroupList(group_list=sorted(groups)).encode())

    async def all_consumer_offsets(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=self._offsets.encode(pretty=False))

    async def all_delay_offsets(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=self._schedule.encode(pretty=False))

    async def clone_group_offset(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(CloneGroupOffsetRequestHeader, cmd)
        topic_list = [h.topic] if h.topic else sorted(self._offsets.topics_of_group(h.src_group))
        grp = self._clients.consumer_group(h.src_group)
        cloned: list[str] = []
        for topic in topic_list:
            if topic not in self._topics:
                continue
            if not h.offline and grp is not None and grp.subscriptions and topic not in grp.subscriptions:
                continue
            if self._offsets.clone(h.src_group, h.dest_group, topic):
                cloned.append(topic)
        _log.info(
            "group offsets cloned",
            src=h.src_group,
            dest=h.dest_group,
            topics=cloned,
            offline=h.offline,
            peer=ctx.conn.peer,
        )
        return cmd.make_response()

    async def broker_consume_stats(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(GetConsumeStatsInBrokerHeader, cmd)
        per_group: list[dict[str, list[ConsumeStats]]] = []
        total = 0
        for cfg in self._groups.all():
            group = cfg.group_name
            stats: list[ConsumeStats] = []
            for topic in sorted(self._offsets.topics_of_group(group)):
                tc = self._topics.get(topic)
                if tc is None or (h.is_order and not tc.order):
                    continue
                table = self._consume_stats.topic_offsets(group, topic, write_queues=True)
                if table is None:
                    continue
                cs = ConsumeStats(table, 0.0)
                total += cs.total_diff()
                stats.append(cs)
            per_group.append({group: stats})
        body = ConsumeStatsList(self._broker_addr(), per_group, total)
        return cmd.make_response(body=body.encode())

    async def consume_time_span(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(QueryConsumeTimeSpanRequestHeader, cmd)
        tc = self._topics.get(h.topic)
        if tc is None:
            raise HandlerError(ResponseCode.TOPIC_NOT_EXIST, f"topic[{h.topic}] not exist")
        store, topic = self._store, h.topic
        spans: list[QueueTimeSpan] = []
        for qid in range(tc.write_queue_nums):
            min_time = await store.get_earliest_message_time(topic, qid)
            max_offset = store.get_max_offset_in_queue(topic, qid)
            max_time = store.get_message_store_timestamp(topic, qid, max_offset - 1)
            committed = self._offsets.query(h.group, topic, qid)
            if committed > 0:
                consume_time = store.get_message_store_timestamp(topic, qid, committed - 1)
            else:
                consume_time = min_time
            delay = 0
            if committed < max_offset:
                next_time = store.get_message_store_timestamp(topic, qid, committed)
                delay = int(self._clock() * 1000) - next_time
            spans.append(
                QueueTimeSpan(
                    consume_time_stamp=consume_time,
                    delay_time=delay,
                    max_time_stamp=max_time,
                    message_queue=MessageQueue(topic, self._broker_name, qid),
                    min_time_stamp=min_time,
                )
            )
        return cmd.make_response(body=QueryConsumeTimeSpanBody(consume_time_span_set=spans).encode())
