"""AdminClient: async wrappers for the admin RPCs ``mqadmin`` and dashboards need (name server and broker).

Replies with a failure code raise the registered ``protocol.errors`` class, whose message carries the server's
remark. JSON bodies are parsed leniently (fastjson's unquoted keys); bodies with MessageQueue object keys (topic
stats, consume stats) are read by ``parse_mq_table`` or the ``protocol.bodies`` decoders.

``RunningInfo`` reads a consumer's GET_CONSUMER_RUNNING_INFO reply, which ``protocol.bodies`` leaves unmodelled:
J (and C++, and this SDK since it writes ``protocol.bodies.encode_consumer_running_info``) writes ``mqTable`` with
MessageQueue object keys and ``statusTable`` as topic → ConsumeStatus; older rocketq clients wrote a list of
``{brokerName, queueId, topic, …}`` objects and a flat table of counters. Both forms are read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from client.errors import MQClientError
from client.instance import ClientInstance
from client.message import MessageQueue
from client.route import TopicRoute
from protocol import bodies, rules
from protocol.bodies import (
    ConsumeMessageDirectlyResult,
    ConsumerConnection,
    ConsumeStatsList,
    GetConsumerStatusBody,
    ProducerConnection,
    QueryConsumeQueueResponseBody,
    SubscriptionData,
    decode_properties_text,
    encode_properties_text,
    loads_lenient,
)
from protocol.codes import RequestCode, ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.errors import ConnectionClosedError, RemotingError, RequestTimeoutError, error_for
from protocol.headers import (
    CloneGroupOffsetRequestHeader,
    ConsumeMessageDirectlyResultRequestHeader,
    ConsumerGroupRequestHeader,
    CreateTopicRequestHeader,
    DeleteSubscriptionGroupRequestHeader,
    GetConsumerRunningInfoRequestHeader,
    GetConsumerStatusRequestHeader,
    GetConsumeStatsInBrokerHeader,
    GetConsumeStatsRequestHeader,
    KVConfigRequestHeader,
    ProducerGroupRequestHeader,
    QueryConsumeQueueRequestHeader,
    QueryMessageRequestHeader,
    ResetOffsetRequestHeader,
    TopicRequestHeader,
    ViewMessageRequestHeader,
)
from protocol.message_ext import MessageExt
from protocol.msg_id import decode_offset_msg_id
from protocol.namespace import wrap
from protocol.record_decode import decode_records


def _system_topic(topic: str) -> bool:
    """J's ``TopicValidator.isSystemTopic`` plus the retry and dead-letter topics of groups."""
    return topic in rules.SYSTEM_TOPIC_SET or topic.startswith(
        (rules.RETRY_PREFIX, rules.DLQ_PREFIX, rules.SYSTEM_TOPIC_PREFIX)
    )


def parse_mq_table(body: bytes, table: str = "offsetTable") -> dict[MessageQueue, Any]:
    """``{"offsetTable":{{mq}:{...}}}`` (J's object keys) or a list form → {MessageQueue: value}."""
    raw = loads_lenient(body, object_key=MessageQueue.from_json)
    entries = raw.get(table) if isinstance(raw, dict) else None
    if isinstance(entries, list):
        return {MessageQueue.from_json(e): e for e in entries if isinstance(e, dict)}
    if isinstance(entries, dict):
        return {k: v for k, v in entries.items() if isinstance(k, MessageQueue)}
    return {}


@dataclass(frozen=True, slots=True)
class RunningInfo:
    """A consumer's GET_CONSUMER_RUNNING_INFO reply (J ``ConsumerRunningInfo``), in either client's form."""

    properties: dict[str, str] = field(default_factory=dict)
    subscriptions: list[SubscriptionData] = field(default_factory=list)
    mq_table: dict[MessageQueue, dict[str, Any]] = field(default_factory=dict)
    status_table: dict[str, Any] = field(default_factory=dict)
    jstack: str | None = None

    @classmethod
    def decode(cls, body: bytes) -> RunningInfo:
        raw = loads_lenient(body, object_key=MessageQueue.from_json) if body else {}
        if not isinstance(raw, dict):
            raise bodies.BodyDecodeError("ConsumerRunningInfo: not a JSON object")
        table = raw.get("mqTable") or {}
        if isinstance(table, list):  # this SDK: [{brokerName, queueId, topic, <ProcessQueueInfo fields>}]
            pairs = [(MessageQueue.from_json(e), e) for e in table if isinstance(e, dict)]
        elif isinstance(table, dict):  # J: {<MessageQueue>: <ProcessQueueInfo>}
            pairs = [(k, v) for k, v in table.items() if isinstance(k, MessageQueue) and isinstance(v, dict)]
        else:
            raise bodies.BodyDecodeError("ConsumerRunningInfo: mqTable is neither a list nor an object")
        queue_keys = ("brokerName", "queueId", "topic")
        mq_table = {mq: {k: v for k, v in pq.items() if k not in queue_keys} for mq, pq in sorted(pairs)}
        subs = [SubscriptionData.from_json(s) for s in raw.get("subscriptionSet") or []]
        jstack = raw.get("jstack")
        return cls(
            {str(k): str(v) for k, v in (raw.get("properties") or {}).items()},
            sorted(subs, key=lambda s: (s.topic, s.sub_string)),
            mq_table,
            dict(raw.get("statusTable") or {}),
            None if jstack is None else str(jstack),
        )


class AdminClient:
    """Admin RPCs. Name-server requests fail over along ``-n``'s list like the SDK (``call_namesrv``): a name server
    that cannot be reached or does not answer in time is skipped; an answer (even an error code) is final."""

    def __init__(
        self,
        namesrv_addr: str | None = None,
        *,
        timeout: float = 5.0,
        access_key: str | None = None,
        secret_key: str | None = None,
        use_tls: bool = False,
        tls_trust_cert_path: str | None = None,
        namespace: str = "",
    ) -> None:
        # topic and group arguments are put in ``namespace`` (``ns%name``, J NamespaceUtil); output shows wrapped names
        self.namespace = namespace
        creds: dict[str, Any] = (
            {"access_key": access_key, "secret_key": secret_key} if access_key and secret_key else {}
        )
        if use_tls:
            creds.update(use_tls=True, tls_trust_cert_path=tls_trust_cert_path)
        self.instance = ClientInstance(namesrv_addr, instance_name="mqadmin", **creds)
        self.timeout = timeout
        self._ns_index = 0

    async def __aenter__(self) -> AdminClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.instance.remoting.close()

    @property
    def namesrv(self) -> str:
        """The name server that answered last (the first of the list until one fails)."""
        return self.instance.namesrv_addrs[self._ns_index % len(self.instance.namesrv_addrs)]

    @property
    def namesrv_addrs(self) -> list[str]:
        """Every name server of ``-n`` / ``NAMESRV_ADDR`` (``;``-separated)."""
        return list(self.instance.namesrv_addrs)

    async def call(
        self,
        addr: str,
        code: int,
        ext: dict[str, str] | None = None,
        body: bytes = b"",
        ok: tuple[int, ...] = (ResponseCode.SUCCESS,),
        timeout: float | None = None,
    ) -> RemotingCommand:
        cmd = RemotingCommand.request(code, ext or {}, body, serialize_type=SerializeType.JSON)
        resp = await self.instance.remoting.invoke(addr, cmd, self.timeout if timeout is None else timeout)
        if resp.code not in ok:
            raise error_for(resp.code, resp.remark, addr)
        return resp

    async def call_namesrv(
        self,
        code: int,
        ext: dict[str, str] | None = None,
        body: bytes = b"",
        ok: tuple[int, ...] = (ResponseCode.SUCCESS,),
    ) -> RemotingCommand:
        """``call`` on the name servers in turn, the last good one first; transport failures (connect refused,
        connection lost, timeout) move on to the next, the last failure is raised when none answers."""
        addrs = self.instance.namesrv_addrs
        last: RemotingError | None = None
        for i in range(len(addrs)):
            idx = (self._ns_index + i) % len(addrs)
            try:
                resp = await self.call(addrs[idx], code, ext, body, ok)
            except (ConnectionClosedError, RequestTimeoutError) as exc:
                last = exc
                continue
            self._ns_index = idx
            return resp
        assert last is not None
        raise last

    # -- name server -----------------------------------------------------------------------------------------------

    async def cluster_info(self) -> dict[str, Any]:
        resp = await self.call_namesrv(RequestCode.GET_BROKER_CLUSTER_INFO)
        return loads_lenient(resp.body) if resp.body else {}

    async def topic_list(self) -> list[str]:
        return await self.instance.fetch_topic_list()

    def _ns(self, name: str) -> str:
        return wrap(self.namespace, name)

    async def topic_route(self, topic: str) -> tuple[TopicRoute, dict[str, Any]]:
        topic = self._ns(topic)
        resp = await self.call_namesrv(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
        return TopicRoute.parse(topic, resp.body), loads_lenient(resp.body)

    async def broker_addrs(self, cluster: str | None = None, broker: str | None = None) -> list[str]:
        if broker:
            return [broker]
        info = await self.cluster_info()
        names = info.get("clusterAddrTable", {}).get(cluster, []) if cluster else list(info.get("brokerAddrTable", {}))
        addrs = []
        for name in names:
            bd = info.get("brokerAddrTable", {}).get(name, {})
            addr = (bd.get("brokerAddrs") or {}).get("0")
            if addr:
                addrs.append(addr)
        return addrs

    async def topic_clusters(self, topic: str) -> list[str]:
        """The clusters holding any broker of ``topic``'s route (J ``getTopicClusterList`` reads only the first)."""
        route, _raw = await self.topic_route(topic)
        clusters = (await self.cluster_info()).get("clusterAddrTable") or {}
        return sorted(c for c, names in clusters.items() if set(route.brokers) & set(names or []))

    async def namesrv_config(self, addr: str) -> dict[str, str]:
        resp = await self.call(addr, RequestCode.GET_NAMESRV_CONFIG)
        return decode_properties_text(resp.body) if resp.body else {}

    async def update_namesrv_config(self, addr: str, props: dict[str, str]) -> None:
        await self.call(addr, RequestCode.UPDATE_NAMESRV_CONFIG, {}, encode_properties_text(props))

    async def put_kv(self, namespace: str, key: str, value: str) -> None:
        await self.call_namesrv(RequestCode.PUT_KV_CONFIG, KVConfigRequestHeader(namespace, key, value).to_ext_fields())

    async def delete_kv(self, namespace: str, key: str) -> None:
        await self.call_namesrv(RequestCode.DELETE_KV_CONFIG, KVConfigRequestHeader(namespace, key).to_ext_fields())

    async def get_kv(self, namespace: str, key: str) -> str | None:
        resp = await self.call_namesrv(
            RequestCode.GET_KV_CONFIG,
            KVConfigRequestHeader(namespace, key).to_ext_fields(),
            ok=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND),
        )
        return resp.ext_fields.get("value") if resp.code == ResponseCode.SUCCESS else None

    async def wipe_write_perm(self, broker_name: str, addr: str | None = None) -> int:
        """WIPE_WRITE_PERM_OF_BROKER on ``addr`` (J's tool asks every name server of the list in turn)."""
        resp = await self.call(addr or self.namesrv, RequestCode.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": broker_name})
        return int(resp.ext_fields.get("wipeTopicCount", "0"))

    async def add_write_perm(self, broker_name: str, addr: str | None = None) -> int:
        """ADD_WRITE_PERM_OF_BROKER on ``addr``: perm 6 again on every topic of the broker; the count changed."""
        resp = await self.call(addr or self.namesrv, RequestCode.ADD_WRITE_PERM_OF_BROKER, {"brokerName": broker_name})
        return int(resp.ext_fields.get("addTopicCount", "0"))

    async def delete_topic_in_namesrv(self, topic: str, cluster: str | None) -> None:
        ext = {"topic": self._ns(topic)}
        if cluster:
            ext["clusterName"] = cluster
        await self.call_namesrv(RequestCode.DELETE_TOPIC_IN_NAMESRV, ext)

    # -- brokers ---------------------------------------------------------------------------------------------------

    async def create_topic(
        self, addr: str, topic: str, read: int, write: int, perm: int, order: bool, attributes: str | None = None
    ) -> None:
        h = CreateTopicRequestHeader(self._ns(topic), "TBW102", read, write, perm, "SINGLE_TAG", 0, order, attributes)
        await self.call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, h.to_ext_fields())

    async def delete_topic_in_broker(self, addr: str, topic: str) -> None:
        await self.call(addr, RequestCode.DELETE_TOPIC_IN_BROKER, TopicRequestHeader(self._ns(topic)).to_ext_fields())

    async def create_group(self, addr: str, config: dict[str, Any]) -> None:
        await self.call(addr, RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, json.dumps(config).encode())

    async def delete_group(self, addr: str, group: str, remove_offset: bool) -> None:
        h = DeleteSubscriptionGroupRequestHeader(self._ns(group), remove_offset)
        await self.call(addr, RequestCode.DELETE_SUBSCRIPTIONGROUP, h.to_ext_fields())

    async def topic_stats(self, addr: str, topic: str) -> dict[MessageQueue, Any]:
        h = TopicRequestHeader(self._ns(topic))
        resp = await self.call(addr, RequestCode.GET_TOPIC_STATS_INFO, h.to_ext_fields())
        return parse_mq_table(resp.body)

    async def consume_stats(self, addr: str, group: str, topic: str | None = None) -> bodies.ConsumeStats:
        resp = await self.call(
            addr,
            RequestCode.GET_CONSUME_STATS,
            GetConsumeStatsRequestHeader(self._ns(group), topic and self._ns(topic)).to_ext_fields(),
        )
        return bodies.ConsumeStats.decode(resp.body)

    async def consumer_connections(self, addr: str, group: str) -> ConsumerConnection:
        resp = await self.call(
            addr, RequestCode.GET_CONSUMER_CONNECTION_LIST, ConsumerGroupRequestHeader(self._ns(group)).to_ext_fields()
        )
        return ConsumerConnection.decode(resp.body)

    async def find_consumer_connection(self, group: str, broker: str | None = None) -> tuple[str, ConsumerConnection]:
        """The first broker (``broker``, else every master in the cluster table) where ``group`` has consumers
        online, and their connections; when none has, the last broker's error (CONSUMER_NOT_ONLINE) is raised."""
        error: RemotingError | None = None
        for addr in await self.broker_addrs(None, broker):
            try:
                return addr, await self.consumer_connections(addr, group)
            except RemotingError as exc:
                error = exc
        raise error or MQClientError(f"no broker found for consumer group {group}")

    async def producer_connections(self, addr: str, group: str) -> ProducerConnection:
        resp = await self.call(
            addr, RequestCode.GET_PRODUCER_CONNECTION_LIST, ProducerGroupRequestHeader(self._ns(group)).to_ext_fields()
        )
        return ProducerConnection.decode(resp.body)

    async def consumer_running_info(self, addr: str, group: str, client_id: str, jstack: bool) -> RunningInfo:
        """Relayed by the broker at ``addr`` to the client (J allows three request timeouts for it)."""
        h = GetConsumerRunningInfoRequestHeader(self._ns(group), client_id, jstack)
        resp = await self.call(addr, RequestCode.GET_CONSUMER_RUNNING_INFO, h.to_ext_fields(), timeout=3 * self.timeout)
        return RunningInfo.decode(resp.body)

    async def consumer_status(
        self, addr: str, topic: str, group: str, client_id: str | None = None
    ) -> dict[str, dict[MessageQueue, int]]:
        """INVOKE_BROKER_TO_GET_CONSUMER_STATUS: client id → the offsets that client holds for ``topic``."""
        h = GetConsumerStatusRequestHeader(topic, group, client_id or None)
        resp = await self.call(addr, RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, h.to_ext_fields())
        body = GetConsumerStatusBody.decode(resp.body)
        return {cid: dict(table) for cid, table in body.consumer_table.items()}

    async def broker_consume_stats(self, addr: str, is_order: bool, timeout: float | None = None) -> ConsumeStatsList:
        h = GetConsumeStatsInBrokerHeader(is_order)
        resp = await self.call(addr, RequestCode.GET_BROKER_CONSUME_STATS, h.to_ext_fields(), timeout=timeout)
        return ConsumeStatsList.decode(resp.body)

    async def clone_group_offset(self, addr: str, src: str, dest: str, topic: str, offline: bool) -> None:
        h = CloneGroupOffsetRequestHeader(src, dest, topic, offline)
        await self.call(addr, RequestCode.CLONE_GROUP_OFFSET, h.to_ext_fields())

    async def query_consume_queue(
        self, addr: str, topic: str, queue_id: int, index: int, count: int, group: str | None = None
    ) -> tuple[QueryConsumeQueueResponseBody, str | None]:
        """The units and the reply's remark (the broker answers SUCCESS with a remark when ``index`` is out of the
        queue's range)."""
        h = QueryConsumeQueueRequestHeader(topic, queue_id, index, count, group)
        resp = await self.call(addr, RequestCode.QUERY_CONSUME_QUEUE, h.to_ext_fields())
        return QueryConsumeQueueResponseBody.decode(resp.body), resp.remark or None

    async def runtime_info(self, addr: str) -> dict[str, str]:
        resp = await self.call(addr, RequestCode.GET_BROKER_RUNTIME_INFO)
        return {str(k): str(v) for k, v in loads_lenient(resp.body).get("table", {}).items()} if resp.body else {}

    async def check_store(self, addr: str) -> dict[str, Any]:
        """The broker store's integrity report (rocketq's CHECK_STORE)."""
        resp = await self.call(addr, RequestCode.CHECK_STORE)
        return dict(json.loads(resp.body)) if resp.body else {}

    async def ha_status(self, addr: str) -> bodies.HARuntimeInfo:
        """GET_BROKER_HA_STATUS (907): the broker's replication state (J 5.x ``HARuntimeInfo`` shape)."""
        resp = await self.call(addr, RequestCode.GET_BROKER_HA_STATUS)
        return bodies.HARuntimeInfo.decode(resp.body)

    async def broker_config(self, addr: str) -> str:
        resp = await self.call(addr, RequestCode.GET_BROKER_CONFIG)
        return resp.body.decode()

    async def update_broker_config(self, addr: str, key: str, value: str) -> None:
        await self.call(addr, RequestCode.UPDATE_BROKER_CONFIG, {}, f"{key}={value}\n".encode())

    async def reset_offset_by_time(
        self, addr: str, topic: str, group: str, timestamp: int, force: bool
    ) -> dict[MessageQueue, Any]:
        h = ResetOffsetRequestHeader(topic, group, timestamp, force)
        resp = await self.call(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, h.to_ext_fields())
        return parse_mq_table(resp.body) if resp.body else {}

    async def view_message(self, msg_id: str) -> MessageExt:
        """VIEW_MESSAGE_BY_ID for an offset msgId (the broker's address and commit-log offset are in it)."""
        ip, port, offset = decode_offset_msg_id(msg_id)
        addr = f"{ip}:{port}"
        resp = await self.call(addr, RequestCode.VIEW_MESSAGE_BY_ID, ViewMessageRequestHeader(offset).to_ext_fields())
        return decode_records(resp.body, decompress=True)[0]

    async def broker_addr_of_offset_id(self, msg_id: str) -> str | None:
        """The broker address an id names when it is an offset msgId of a broker the name server knows; None for
        anything else (a producer's unique id decodes to a made-up address: J's OverflowError trap)."""
        try:
            ip, port, _offset = decode_offset_msg_id(msg_id)
        except ValueError:
            return None
        if not 0 < port < 65536:
            return None
        addr = f"{ip}:{port}"
        info = await self.cluster_info()
        known = {
            a for bd in (info.get("brokerAddrTable") or {}).values() for a in (bd.get("brokerAddrs") or {}).values()
        }
        return addr if addr in known else None

    async def query_by_unique_key(self, topic: str, uniq_key: str, max_num: int = 32) -> list[MessageExt]:
        """J ``queryMessageByUniqKey``: the index lookup by UNIQ_KEY on every broker of the topic, only messages
        whose UNIQ_KEY is exactly ``uniq_key`` (index slots are shared by hash)."""
        found = await self.query_by_key(topic, uniq_key, max_num, unique=True)
        return [m for m in found if m.properties.get("UNIQ_KEY") == uniq_key]

    async def find_message(self, msg_id: str, topic: str | None = None) -> MessageExt | None:
        """A message by either kind of id: an offset msgId of a known broker is read directly; anything else is
        taken as a unique (client) id and looked up in ``topic``'s index — in every topic when none is given."""
        if await self.broker_addr_of_offset_id(msg_id) is not None:
            return await self.view_message(msg_id)
        topics = [topic] if topic else [t for t in await self.topic_list() if not _system_topic(t)]
        for t in topics:
            try:
                found = await self.query_by_unique_key(t, msg_id)
            except RemotingError:
                continue
            if found:
                return found[0]
        return None

    async def consume_message_directly(self, msg_id: str, group: str, client_id: str) -> ConsumeMessageDirectlyResult:
        """CONSUME_MESSAGE_DIRECTLY to the broker that stored ``msg_id`` (an offset msgId), which relays the message
        to ``client_id`` of ``group``; three request timeouts, as J allows."""
        ip, port, _offset = decode_offset_msg_id(msg_id)
        h = ConsumeMessageDirectlyResultRequestHeader(group, client_id, msg_id)
        resp = await self.call(
            f"{ip}:{port}", RequestCode.CONSUME_MESSAGE_DIRECTLY, h.to_ext_fields(), timeout=3 * self.timeout
        )
        return ConsumeMessageDirectlyResult.decode(resp.body)

    async def query_by_key(self, topic: str, key: str, max_num: int = 64, unique: bool = False) -> list[MessageExt]:
        topic = self._ns(topic)
        route, _raw = await self.topic_route(topic)
        out: list[MessageExt] = []
        h = QueryMessageRequestHeader(topic, key, max_num, 0, 2**62, unique)
        for bd in route.brokers.values():
            addr = bd.any_addr()  # the master, else a slave (J ``selectBrokerAddr``)
            if not addr:
                continue
            resp = await self.call(
                addr,
                RequestCode.QUERY_MESSAGE,
                h.to_ext_fields(),
                ok=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND),
            )
            if resp.code == ResponseCode.SUCCESS and resp.body:
                out.extend(decode_records(resp.body, decompress=True))
        return out
