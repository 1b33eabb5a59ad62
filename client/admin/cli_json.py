"""``--json`` for the read commands whose text form lives in ``cli`` and ``cli_ops`` (topicStatus, brokerStatus,
getBrokerConfig, getNamesrvConfig, queryMsgByKey, consumerConnection, producerConnection, topicClusterList,
brokerConsumeStats, getConsumerStatus, queryCq, consumerStatus).

``install()`` (called by ``cli.main``) wraps each registered command: its options gain ``--json``; without it the
command runs unchanged, with it the function here prints the same data as one JSON document. The newer command
modules (``cli_messages``, ``cli_groups``, ``cli_topics``, ``cli_cluster``, ``cli_more``) take ``--json`` natively.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import Any

from client.admin.admin_client import AdminClient
from client.admin.output import json_arg, print_json
from client.admin.registry import COMMANDS, target_brokers
from client.errors import MQClientError
from protocol.bodies import Connection, decode_properties_text
from protocol.errors import RemotingError

JsonForm = Callable[[AdminClient, argparse.Namespace], Awaitable[Any]]


def _conn(c: Connection) -> dict[str, Any]:
    return {"clientId": c.client_id, "clientAddr": c.client_addr, "language": str(c.language), "version": c.version}


async def _topic_status(admin: AdminClient, a: argparse.Namespace) -> Any:
    route, _raw = await admin.topic_route(a.topic)
    out = []
    for bd in sorted(route.brokers.values(), key=lambda b: b.broker_name):
        if bd.master_addr:
            for mq, s in sorted((await admin.topic_stats(bd.master_addr, a.topic)).items()):
                out.append(
                    {"brokerName": mq.broker_name, "queueId": mq.queue_id, "minOffset": s.get("minOffset", 0),
                     "maxOffset": s.get("maxOffset", 0), "lastUpdateTimestamp": s.get("lastUpdateTimestamp", 0)}
                )  # fmt: skip
    return out


async def _broker_status(admin: AdminClient, a: argparse.Namespace) -> Any:
    return {addr: await admin.runtime_info(addr) for addr in await target_brokers(admin, a)}


async def _broker_config(admin: AdminClient, a: argparse.Namespace) -> Any:
    return {addr: decode_properties_text(await admin.broker_config(addr)) for addr in await target_brokers(admin, a)}


async def _namesrv_config(admin: AdminClient, a: argparse.Namespace) -> Any:
    return {addr: await admin.namesrv_config(addr) for addr in admin.namesrv_addrs}


async def _query_by_key(admin: AdminClient, a: argparse.Namespace) -> Any:
    return [
        {"msgId": m.msg_id, "offsetMsgId": m.offset_msg_id, "queueId": m.queue_id, "queueOffset": m.queue_offset,
         "keys": m.properties.get("KEYS"), "tags": m.tags, "storeTimestamp": m.store_timestamp}
        for m in await admin.query_by_key(a.topic, a.msgKey)
    ]  # fmt: skip


async def _consumer_connection(admin: AdminClient, a: argparse.Namespace) -> Any:
    _addr, conn = await admin.find_consumer_connection(a.consumerGroup)
    return {
        "connections": [_conn(c) for c in sorted(conn.connection_set, key=lambda c: c.client_id)],
        "subscriptions": {t: s.sub_string for t, s in sorted(conn.subscription_table.items())},
        "consumeType": conn.consume_type,
        "messageModel": conn.message_model,
        "consumeFromWhere": conn.consume_from_where,
    }


async def _producer_connection(admin: AdminClient, a: argparse.Namespace) -> Any:
    route, _raw = await admin.topic_route(a.topic)
    conns: dict[str, dict[str, Any]] = {}
    for bd in route.brokers.values():
        if not bd.master_addr:
            continue
        try:
            pc = await admin.producer_connections(bd.master_addr, a.producerGroup)
        except RemotingError:
            continue
        conns.update((c.client_id, _conn(c)) for c in pc.connection_set)
    if not conns:
        raise MQClientError(f"Not found the producer group connection: {a.producerGroup}")
    return [conns[k] for k in sorted(conns)]


async def _topic_cluster_list(admin: AdminClient, a: argparse.Namespace) -> Any:
    return await admin.topic_clusters(a.topic)


async def _broker_consume_stats(admin: AdminClient, a: argparse.Namespace) -> Any:
    stats = await admin.broker_consume_stats(a.brokerAddr, a.order, a.timeoutMillis / 1000)
    rows = []
    for entry in stats.consume_stats_list:
        for group, per_topic in entry.items():
            for cs in per_topic:
                for mq, w in sorted(cs.offset_table.items()):
                    if w.broker_offset - w.consumer_offset >= a.level:
                        rows.append(
                            {"topic": mq.topic, "group": group, "brokerName": mq.broker_name, "queueId": mq.queue_id,
                             "brokerOffset": w.broker_offset, "consumerOffset": w.consumer_offset,
                             "diff": w.broker_offset - w.consumer_offset, "lastTimestamp": w.last_timestamp}
                        )  # fmt: skip
    return {"queues": rows, "diffTotal": stats.total_diff}


async def _get_consumer_status(admin: AdminClient, a: argparse.Namespace) -> Any:
    route, _raw = await admin.topic_route(a.topic)
    out = []
    for bd in route.brokers.values():
        if bd.master_addr:
            status = await admin.consumer_status(bd.master_addr, a.topic, a.group, a.originClientId)
            for cid, offsets in sorted(status.items()):
                out += [
                    {"clientId": cid, "brokerName": mq.broker_name, "queueId": mq.queue_id, "offset": off}
                    for mq, off in sorted(offsets.items())
                ]
    return out


async def _query_cq(admin: AdminClient, a: argparse.Namespace) -> Any:
    addr = a.broker
    if not addr:
        route, _raw = await admin.topic_route(a.topic)
        masters = sorted(bd.master_addr for bd in route.brokers.values() if bd.master_addr)
        if not masters:
            raise MQClientError(f"No topic route data! topic={a.topic}")
        addr = masters[0]
    body, remark = await admin.query_consume_queue(addr, a.topic, a.queue, a.index, a.count, a.consumer)
    return {
        "minQueueIndex": body.min_queue_index,
        "maxQueueIndex": body.max_queue_index,
        "remark": remark,
        "units": [
            {"index": i, "physicOffset": u.physic_offset, "physicSize": u.physic_size, "tagsCode": u.tags_code}
            for i, u in enumerate(body.queue_data, a.index)
        ],
    }


async def _consumer_status(admin: AdminClient, a: argparse.Namespace) -> Any:
    addr, conn = await admin.find_consumer_connection(a.consumerGroup, a.brokerAddr)
    ids = [a.clientId] if a.clientId else sorted(c.client_id for c in conn.connection_set)
    out = {}
    for cid in ids:
        info = await admin.consumer_running_info(addr, a.consumerGroup, cid, a.jstack)
        out[cid] = {
            "properties": info.properties,
            "subscriptions": {s.topic: s.sub_string for s in info.subscriptions},
            "queues": [{"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id, **pq}
                       for mq, pq in info.mq_table.items()],
            "statusTable": info.status_table,
        }  # fmt: skip
    return out


FORMS: dict[str, JsonForm] = {
    "topicStatus": _topic_status,
    "brokerStatus": _broker_status,
    "getBrokerConfig": _broker_config,
    "getNamesrvConfig": _namesrv_config,
    "queryMsgByKey": _query_by_key,
    "consumerConnection": _consumer_connection,
    "producerConnection": _producer_connection,
    "topicClusterList": _topic_cluster_list,
    "brokerConsumeStats": _broker_consume_stats,
    "getConsumerStatus": _get_consumer_status,
    "queryCq": _query_cq,
    "consumerStatus": _consumer_status,
}
_installed: set[str] = set()


def install() -> None:
    """Give each command of ``FORMS`` a ``--json`` option (once)."""
    for name, form in FORMS.items():
        key = name.lower()
        if key in _installed or key not in COMMANDS:
            continue
        help_text, add_args, fn = COMMANDS[key]

        def args(p: argparse.ArgumentParser, add_args: Callable[[argparse.ArgumentParser], object] = add_args) -> None:
            add_args(p)
            json_arg(p)

        async def run(admin: AdminClient, a: argparse.Namespace, fn: Any = fn, form: JsonForm = form) -> int:
            if not a.json:
                return int(await fn(admin, a))
            print_json(await form(admin, a))
            return 0

        COMMANDS[key] = (help_text, args, run)
        _installed.add(key)
