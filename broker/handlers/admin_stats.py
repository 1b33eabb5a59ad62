"""Read-only admin views and the consumer relay (J ``AdminBrokerProcessor`` / ``Broker2Client``):

GET_TOPIC_STATS_INFO (202)
    ``{"offsetTable":{<MessageQueue>:{"minOffset","maxOffset","lastUpdateTimestamp"}}}`` per write queue; unknown
    topic → TOPIC_NOT_EXIST "topic[t] not exist".
GET_CONSUME_STATS (208)
    ``{"consumeTps":x,"offsetTable":{<MessageQueue>:{"brokerOffset","consumerOffset","lastTimestamp","pullOffset"}}}``
    (``protocol.bodies.ConsumeStats``; ``pullOffset`` is J 5.x's, always 0 here) for the header's topic, or (no
    topic) every topic the group has committed offsets on plus its ``%RETRY%`` topic. A topic the group's online
    consumers do not subscribe is skipped (J). lag = brokerOffset - consumerOffset; a queue with nothing committed
    shows consumerOffset 0. ``consumeTps`` is J's ``tpsGroupGetNums`` summed over those topics: messages the group
    pulled per second over the last minute (``BrokerStats``).
GET_CONSUMER_CONNECTION_LIST (203)
    ``{"connectionSet":[{clientId, clientAddr, language, version}], "subscriptionTable":{topic:SubscriptionData},
    "consumeType", "messageModel", "consumeFromWhere"}``; no consumer online → CONSUMER_NOT_ONLINE
    "the consumer group[g] not online".
GET_PRODUCER_CONNECTION_LIST (204)
    ``{"connectionSet":[...]}``; none → SYSTEM_ERROR "the producer group[g] not exist".
GET_BROKER_RUNTIME_INFO (28)
    KVTable ``{"table":{...}}`` (all values strings): brokerVersionDesc, brokerVersion, msgPutTotalTodayNow,
    msgGetTotalTodayNow, putTps / getFoundTps / getMissTps / getTotalTps / getTransferedTps ("10s 60s 600s" rates
    from BrokerStats' once-a-second samples), send/pull queue sizes, earliestMessageTimeStamp, commitLogDiskRatio,
    commitLogMinOffset/MaxOffset, dispatchBehindBytes, bootTimestamp, runtime, topicCount, queueCount, brokerActive
    ("true" on a master, clusterList's #ACTIVATED), …
GET_CONSUMER_RUNNING_INFO (307)
    forwarded with the same ext fields and body to the connection of that clientId (10 s); the client's reply code,
    remark and body are relayed unchanged (the body as bytes: clients do not write valid JSON there). Unknown client
    → CONSUMER_NOT_ONLINE "The Consumer <g> <cid> not online"; no reply in time → CONSUME_MSG_TIMEOUT
    (``_common.call_consumer``).
VIEW_BROKER_STATS_DATA (315)
    ``{"statsMinute"|"statsHour"|"statsDay": {"sum","tps","avgpt"}}`` for statsName TOPIC_PUT_NUMS (key topic) or
    GROUP_GET_NUMS (key topic@group), ``statsAll``'s source; unknown → SYSTEM_ERROR "The stats <n> <k> not exist".

``ConsumeStatsBuilder`` computes one group's offsets on one topic; GET_CONSUME_STATS here and
GET_BROKER_CONSUME_STATS (``admin_offsets``) both use it.

MessageQueue keys are written in J's fastjson form (a JSON object as the key), which J tools and our admin client
parse; the rest is standard JSON.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from broker import topics as T
from broker.handlers._common import call_consumer, decode_header
from broker.services.broker_stats import (
    BROKER_GET_MISS,
    BROKER_GET_NUMS,
    BROKER_GET_TOTAL,
    BROKER_PUT_NUMS,
    BrokerStats,
    earliest_store_time,
)
from broker.services.client_registry import ClientChannel
from broker.services.group_state import GroupStateTables
from protocol.bodies import ConsumeStats, MessageQueue, OffsetWrapper, TopicOffset, TopicStatsTable
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import (
    ConsumerGroupRequestHeader,
    GetConsumerRunningInfoRequestHeader,
    GetConsumeStatsRequestHeader,
    ProducerGroupRequestHeader,
    TopicRequestHeader,
)
from protocol.remoting.handler import Handler, HandlerError, RequestContext

BROKER_VERSION_DESC = "V4_9_7"
BROKER_VERSION = 407
ROCKETQ_VERSION = "rocketq-0.1.0"  # our own version, beside the RocketMQ one J clients parse


def _connection_set(chans: Iterable[ClientChannel]) -> list[dict[str, Any]]:
    """J ``ConsumerConnection``/``ProducerConnection`` ``connectionSet``: one entry per live client channel."""
    return [
        {
            "clientAddr": c.channel.peer,
            "clientId": c.client_id,
            "language": getattr(c.language, "name", str(c.language)),
            "version": c.version,
        }
        for c in chans
    ]


class ConsumeStatsBuilder:
    """One group's progress on one topic of this broker, as J's ``getConsumeStats`` and
    ``fetchAllConsumeStatsInBroker`` compute it per queue: brokerOffset = the queue's max offset, consumerOffset = the
    committed offset (0 when none), lastTimestamp = store time of the last consumed message (0 when none)."""

    def __init__(
        self,
        tables: GroupStateTables,
        *,
        broker_name: str,
    ) -> None:
        self._store, self._topics, _, self._offsets, self._clients = tables
        self._broker_name = broker_name
        # POP groups (the gRPC endpoint, broker.proxy): the queue's pop offset → OffsetWrapper.pullOffset, so
        # pullOffset − consumerOffset counts messages popped and not yet acked (J 5's #Inflight)
        self.pull_offset: Callable[[str, str, int], int | None] | None = None

    def topic_offsets(
        self, group: str, topic: str, *, write_queues: bool = False
    ) -> dict[MessageQueue, OffsetWrapper] | None:
        """Per queue of ``topic`` (its read queues; its write queues with ``write_queues``, as J's broker-wide
        stats count them). None when the topic is unknown here, or when the group has consumers online that do
        not subscribe it (J skips such a topic)."""
        tc = self._topics.get(topic)
        if tc is None:
            return None
        grp = self._clients.consumer_group(group)
        if grp is not None and grp.subscriptions and topic not in grp.subscriptions:
            return None
        committed = self._offsets.query_all(group, topic)
        out: dict[MessageQueue, OffsetWrapper] = {}
        for qid in range(tc.write_queue_nums if write_queues else tc.read_queue_nums):
            broker_off = max(self._store.get_max_offset_in_queue(topic, qid), 0)
            consumer_off = max(committed.get(qid, 0), 0)
            last = 0
            if consumer_off - 1 >= 0:
                last = max(self._store.get_message_store_timestamp(topic, qid, consumer_off - 1), 0)
            pulled = self.pull_offset(group, topic, qid) if self.pull_offset is not None else None
            out[MessageQueue(topic, self._broker_name, qid)] = OffsetWrapper(
                broker_off, consumer_off, last, pulled if pulled is not None else 0
            )
        return out


class AdminStatsHandlers:
    def __init__(
        self,
        tables: GroupStateTables,
        consume_stats: ConsumeStatsBuilder,
        *,
        broker_name: str,
        clock: Callable[[], float] = time.time,
        stats: BrokerStats | None = None,
    ) -> None:
        self._stats = stats if stats is not None else BrokerStats()
        self._store, self._topics, _, self._offsets, self._clients = tables
        self._consume_stats = consume_stats
        self._broker_name = broker_name
        self._clock = clock

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.GET_TOPIC_STATS_INFO: self.topic_stats,
            RequestCode.GET_CONSUME_STATS: self.consume_stats,
            RequestCode.GET_CONSUMER_CONNECTION_LIST: self.consumer_connections,
            RequestCode.GET_PRODUCER_CONNECTION_LIST: self.producer_connections,
            RequestCode.GET_BROKER_RUNTIME_INFO: self.runtime_info,
            RequestCode.GET_CONSUMER_RUNNING_INFO: self.consumer_running_info,
            RequestCode.CHECK_STORE: self.check_store,
            RequestCode.VIEW_BROKER_STATS_DATA: self.view_stats,
        }

    async def check_store(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        """The store's integrity report (JSON): quarantined records, repaired files and units, skipped reads."""
        return cmd.make_response(body=json.dumps(self._store.check_report(), separators=(",", ":")).encode())

    async def topic_stats(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(TopicRequestHeader, cmd)
        tc = self._topics.get(h.topic)
        if tc is None:
            raise HandlerError(ResponseCode.TOPIC_NOT_EXIST, f"topic[{h.topic}] not exist")
        table: dict[MessageQueue, TopicOffset] = {}
        for qid in range(tc.write_queue_nums):
            mn = self._store.get_min_offset_in_queue(h.topic, qid)
            mx = self._store.get_max_offset_in_queue(h.topic, qid)
            last = self._store.get_message_store_timestamp(h.topic, qid, mx - 1) if mx > 0 else 0
            table[MessageQueue(h.topic, self._broker_name, qid)] = TopicOffset(mn, mx, max(last, 0))
        return cmd.make_response(body=TopicStatsTable(table).encode())

    async def consume_stats(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(GetConsumeStatsRequestHeader, cmd)
        group = h.consumer_group
        if h.topic:
            topic_list = [h.topic]
        else:
            names = self._offsets.topics_of_group(group)
            retry = T.retry_topic(group)
            if retry in self._topics:
                names.add(retry)
            topic_list = sorted(names)
        table: dict[MessageQueue, OffsetWrapper] = {}
        tps = 0.0
        for topic in topic_list:
            offsets = self._consume_stats.topic_offsets(group, topic)
            if offsets is not None:
                table.update(offsets)
                tps += self._stats.group_get_tps(group, topic)  # J tpsGroupGetNums: the last minute
        return cmd.make_response(body=ConsumeStats(table, tps).encode())

    async def consumer_connections(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(ConsumerGroupRequestHeader, cmd)
        grp = self._clients.consumer_group(h.consumer_group)
        chans = [c for c in grp.channels.values() if not c.channel.is_closed] if grp is not None else []
        if grp is None or not chans:
            raise HandlerError(ResponseCode.CONSUMER_NOT_ONLINE, f"the consumer group[{h.consumer_group}] not online")
        body = {
            "connectionSet": _connection_set(chans),
            "consumeFromWhere": grp.consume_from_where,
            "consumeType": grp.consume_type,
            "messageModel": grp.message_model,
            "subscriptionTable": {topic: s.to_wire().to_json() for topic, s in grp.subscriptions.items()},
        }
        return cmd.make_response(body=json.dumps(body, separators=(",", ":")).encode())

    async def producer_connections(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(ProducerGroupRequestHeader, cmd)
        chans = [c for c in self._clients.producer_groups().get(h.producer_group, []) if not c.channel.is_closed]
        if not chans:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"the producer group[{h.producer_group}] not exist")
        body = {"connectionSet": _connection_set(chans)}
        return cmd.make_response(body=json.dumps(body, separators=(",", ":")).encode())

    def runtime_table(self) -> dict[str, str]:
        info = self._store.runtime_info()
        now_ms = int(self._clock() * 1000)
        put_total = int(info.get("putMessageTimesTotal", 0))
        get_total = int(info.get("getMessageTimesTotal", 0))
        st = self._stats
        boot = int(info.get("bootTimestamp", now_ms))
        table: dict[str, Any] = {
            "brokerVersionDesc": BROKER_VERSION_DESC,
            "brokerVersion": BROKER_VERSION,
            "msgPutTotalTodayNow": put_total,
            "msgGetTotalTodayNow": get_total,
            "rocketqVersion": ROCKETQ_VERSION,
            # J's windows (10 s, 1 min, 10 min), from the once-a-second samples of BrokerStats
            "putTps": st.tps_windows(BROKER_PUT_NUMS),
            "getFoundTps": st.tps_windows(BROKER_GET_NUMS),
            "getMissTps": st.tps_windows(BROKER_GET_MISS),
            "getTotalTps": st.tps_windows(BROKER_GET_TOTAL),
            "getTransferedTps": st.tps_windows(BROKER_GET_NUMS),
            "getTransferredTps": st.tps_windows(BROKER_GET_NUMS),  # 5.x's spelling, read by 5.5.0's clusterList
            # requests inside the send / pull handlers (J: thread-pool queue lengths); held pulls excluded
            "sendThreadPoolQueueSize": st.send_inflight,
            "pullThreadPoolQueueSize": st.pull_inflight,
            "sendThreadPoolQueueHeadWaitTimeMills": 0,
            "pullThreadPoolQueueHeadWaitTimeMills": 0,
            "queryThreadPoolQueueSize": 0,
            "queryThreadPoolQueueHeadWaitTimeMills": 0,
            "pageCacheLockTimeMills": 0,
            "earliestMessageTimeStamp": earliest_store_time(self._store),
            "bootTimestamp": boot,
            "runtime": f"[ {(now_ms - boot) // 86_400_000} days, {(now_ms - boot) // 3_600_000 % 24} hours, "
            f"{(now_ms - boot) // 60_000 % 60} minutes, {(now_ms - boot) // 1000 % 60} seconds ]",
            "topicCount": len(self._topics.all()),
            "consumerGroupOnlineCount": len(self._clients.consumer_groups()),
            "producerGroupOnlineCount": len(self._clients.producer_groups()),
            # J: isSpecialServiceRunning(), a master's schedule/transaction services; clusterList's #ACTIVATED
            # (broker.ha says "false" on a slave)
            "brokerActive": "true",
        }
        for key, value in info.items():
            table.setdefault(key, value)
        return {k: str(v) for k, v in table.items()}

    async def runtime_info(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        body = json.dumps({"table": self.runtime_table()}, separators=(",", ":"))
        return cmd.make_response(body=body.encode())

    async def view_stats(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        """VIEW_BROKER_STATS_DATA (315), ``statsAll``'s source: J ``BrokerStatsData`` for statsName TOPIC_PUT_NUMS
        (key topic) or GROUP_GET_NUMS (key topic@group): sum and tps over the last minute, hour and day."""
        name, key = cmd.ext_fields.get("statsName", ""), cmd.ext_fields.get("statsKey", "")
        series = self._stats.series(name, key)
        if series is None:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"The stats <{name}> <{key}> not exist")
        body = {
            label: {"sum": series.increase(window), "tps": round(series.rate(window), 2), "avgpt": 0.0}
            for label, window in (("statsMinute", 60), ("statsHour", 3600), ("statsDay", 86400))
        }
        return cmd.make_response(body=json.dumps(body, separators=(",", ":")).encode())

    async def consumer_running_info(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(GetConsumerRunningInfoRequestHeader, cmd)
        return await call_consumer(self._clients, cmd, h.consumer_group, h.client_id)
