"""AdminClient: async wrappers for the admin RPCs ``mqadmin`` and dashboards need (name server and broker).

Replies with a failure code raise the registered ``protocol.errors`` class, whose message carries the server's
remark. JSON bodies are parsed leniently (fastjson's unquoted keys); bodies with MessageQueue object keys (topic
stats, consume stats) are read by ``parse_mq_table``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from client.instance import ClientInstance
from client.message import MessageQueue
from client.route import TopicRoute, loads_lenient
from protocol.codes import RequestCode, ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.errors import error_for
from protocol.headers import (
    CreateTopicRequestHeader,
    DeleteSubscriptionGroupRequestHeader,
    GetConsumeStatsRequestHeader,
    KVConfigRequestHeader,
    QueryMessageRequestHeader,
    ResetOffsetRequestHeader,
    TopicRequestHeader,
    ViewMessageRequestHeader,
)
from protocol.message import MessageExt, decode_offset_msg_id, decode_records

_MQ_KEY = re.compile(r"(\{[^{}]*\})\s*:\s*(\{[^{}]*\}|-?\d+)")


def parse_mq_table(body: bytes, table: str = "offsetTable") -> dict[MessageQueue, Any]:
    """``{"offsetTable":{{mq}:{...}}}`` (J's object keys) or a list form → {MessageQueue: value}."""
    text = body.decode()
    out: dict[MessageQueue, Any] = {}
    try:
        raw = json.loads(text)
        if isinstance(raw.get(table), list):
            for e in raw[table]:
                out[MessageQueue.from_json(e)] = e
            return out
    except ValueError:
        pass
    for m in _MQ_KEY.finditer(text):
        try:
            key = MessageQueue.from_json(json.loads(m.group(1)))
        except (ValueError, KeyError):
            continue
        out[key] = json.loads(m.group(2))
    return out


class AdminClient:
    def __init__(self, namesrv_addr: str | None = None, *, timeout: float = 5.0) -> None:
        self.instance = ClientInstance(namesrv_addr, instance_name="mqadmin")
        self.timeout = timeout

    async def __aenter__(self) -> AdminClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.instance.remoting.close()

    @property
    def namesrv(self) -> str:
        return self.instance.namesrv_addrs[0]

    async def call(
        self,
        addr: str,
        code: int,
        ext: dict[str, str] | None = None,
        body: bytes = b"",
        ok: tuple[int, ...] = (ResponseCode.SUCCESS,),
    ) -> RemotingCommand:
        cmd = RemotingCommand.request(code, ext or {}, body, serialize_type=SerializeType.JSON)
        resp = await self.instance.remoting.invoke(addr, cmd, self.timeout)
        if resp.code not in ok:
            raise error_for(resp.code, resp.remark, addr)
        return resp

    # -- name server -----------------------------------------------------------------------------------------------

    async def cluster_info(self) -> dict[str, Any]:
        resp = await self.call(self.namesrv, RequestCode.GET_BROKER_CLUSTER_INFO)
        return loads_lenient(resp.body) if resp.body else {}

    async def topic_list(self) -> list[str]:
        return await self.instance.fetch_topic_list()

    async def topic_route(self, topic: str) -> tuple[TopicRoute, dict[str, Any]]:
        resp = await self.call(self.namesrv, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
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

    async def put_kv(self, namespace: str, key: str, value: str) -> None:
        await self.call(
            self.namesrv, RequestCode.PUT_KV_CONFIG, KVConfigRequestHeader(namespace, key, value).to_ext_fields()
        )

    async def delete_kv(self, namespace: str, key: str) -> None:
        await self.call(
            self.namesrv, RequestCode.DELETE_KV_CONFIG, KVConfigRequestHeader(namespace, key).to_ext_fields()
        )

    async def wipe_write_perm(self, broker_name: str) -> int:
        resp = await self.call(self.namesrv, RequestCode.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": broker_name})
        return int(resp.ext_fields.get("wipeTopicCount", "0"))

    async def delete_topic_in_namesrv(self, topic: str, cluster: str | None) -> None:
        ext = {"topic": topic}
        if cluster:
            ext["clusterName"] = cluster
        await self.call(self.namesrv, RequestCode.DELETE_TOPIC_IN_NAMESRV, ext)

    # -- brokers ---------------------------------------------------------------------------------------------------

    async def create_topic(self, addr: str, topic: str, read: int, write: int, perm: int, order: bool) -> None:
        h = CreateTopicRequestHeader(topic, "TBW102", read, write, perm, "SINGLE_TAG", 0, order)
        await self.call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, h.to_ext_fields())

    async def delete_topic_in_broker(self, addr: str, topic: str) -> None:
        await self.call(addr, RequestCode.DELETE_TOPIC_IN_BROKER, TopicRequestHeader(topic).to_ext_fields())

    async def create_group(self, addr: str, config: dict[str, Any]) -> None:
        await self.call(addr, RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, json.dumps(config).encode())

    async def delete_group(self, addr: str, group: str, remove_offset: bool) -> None:
        h = DeleteSubscriptionGroupRequestHeader(group, remove_offset)
        await self.call(addr, RequestCode.DELETE_SUBSCRIPTIONGROUP, h.to_ext_fields())

    async def topic_stats(self, addr: str, topic: str) -> dict[MessageQueue, Any]:
        resp = await self.call(addr, RequestCode.GET_TOPIC_STATS_INFO, TopicRequestHeader(topic).to_ext_fields())
        return parse_mq_table(resp.body)

    async def consume_stats(
        self, addr: str, group: str, topic: str | None = None
    ) -> tuple[dict[MessageQueue, Any], float]:
        resp = await self.call(
            addr, RequestCode.GET_CONSUME_STATS, GetConsumeStatsRequestHeader(group, topic).to_ext_fields()
        )
        tps = 0.0
        m = re.search(r'"consumeTps"\s*:\s*([0-9.eE+-]+)', resp.body.decode())
        if m:
            tps = float(m.group(1))
        return parse_mq_table(resp.body), tps

    async def consumer_connections(self, addr: str, group: str) -> dict[str, Any]:
        resp = await self.call(addr, RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": group})
        return loads_lenient(resp.body) if resp.body else {}

    async def runtime_info(self, addr: str) -> dict[str, str]:
        resp = await self.call(addr, RequestCode.GET_BROKER_RUNTIME_INFO)
        return {str(k): str(v) for k, v in loads_lenient(resp.body).get("table", {}).items()} if resp.body else {}

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
        ip, port, offset = decode_offset_msg_id(msg_id)
        addr = f"{ip}:{port}"
        resp = await self.call(addr, RequestCode.VIEW_MESSAGE_BY_ID, ViewMessageRequestHeader(offset).to_ext_fields())
        return decode_records(resp.body, decompress=True)[0]

    async def query_by_key(self, topic: str, key: str, max_num: int = 64, unique: bool = False) -> list[MessageExt]:
        route, _raw = await self.topic_route(topic)
        out: list[MessageExt] = []
        h = QueryMessageRequestHeader(topic, key, max_num, 0, 2**62, unique)
        for bd in route.brokers.values():
            if not bd.master_addr:
                continue
            resp = await self.call(
                bd.master_addr,
                RequestCode.QUERY_MESSAGE,
                h.to_ext_fields(),
                ok=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND),
            )
            if resp.code == ResponseCode.SUCCESS and resp.body:
                out.extend(decode_records(resp.body, decompress=True))
        return out
