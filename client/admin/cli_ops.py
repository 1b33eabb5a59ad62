"""``mqadmin`` commands for consumer and producer diagnostics, consume-queue inspection and the name server's config
(RocketMQ 4.9 tools' names and option letters; registered in ``registry.COMMANDS`` on import):

==================== ====================================================== =========================================
command              options                                                request(s)
==================== ====================================================== =========================================
brokerConsumeStats   -b brokerAddr [-o isOrder] [-l level] [-t timeoutMillis] GET_BROKER_CONSUME_STATS (317)
cloneGroupOffset     -s srcGroup -d destGroup -t topic [-o offline]          CLONE_GROUP_OFFSET (314) per route broker
queryCq              -t topic -q queueId -i index [-c count] [-g group]      QUERY_CONSUME_QUEUE (321)
                     [-b brokerAddr]
producerConnection   -g producerGroup -t topic                              GET_PRODUCER_CONNECTION_LIST (204)
consumerStatus       -g group [-i clientId] [-s] [-b brokerAddr]            GET_CONSUMER_CONNECTION_LIST (203),
                                                                            GET_CONSUMER_RUNNING_INFO (307)
getConsumerStatus    -g group -t topic [-i clientId]                        INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223)
topicClusterList     -t topic                                               route + GET_BROKER_CLUSTER_INFO (106)
getNamesrvConfig     (none)                                                 GET_NAMESRV_CONFIG (319) per name server
updateNamesrvConfig  -k key -v value                                        UPDATE_NAMESRV_CONFIG (318) per name server
==================== ====================================================== =========================================

Where J's tool differs and why: brokerConsumeStats also lists queues the group never consumed (J hides rows whose
lastTimestamp is 0, so a group that is entirely behind shows nothing but its Diff Total); consumerStatus without
``-i`` prints each client's running info instead of writing it to ``<now>/<clientId>`` files; producerConnection
prints the connection table with its header; topicClusterList and getConsumerStatus ask every broker of the route
(J only the first).
"""

from __future__ import annotations

import argparse
import sys

from client.admin.admin_client import AdminClient
from client.admin.formatting import (
    SEPARATOR,
    consume_queue_unit,
    offset_header,
    offset_row,
    print_config,
    print_connections,
    print_running_info,
    row,
    subscription_json,
)
from client.admin.registry import command
from client.errors import MQClientError
from client.message import MessageQueue
from protocol.bodies import Connection
from protocol.errors import RemotingError


def java_bool(text: str) -> bool:
    """An option value ``true``/``false`` (any case); anything else is a usage error."""
    low = text.strip().lower()
    if low not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return low == "true"


def one_line(text: str) -> str:
    """A config key or value: the request body is ``key=value`` lines, so a line break would smuggle in a key."""
    if "\n" in text or "\r" in text:
        raise argparse.ArgumentTypeError("must not contain a line break")
    return text.strip()


async def _route_masters(admin: AdminClient, topic: str) -> list[str]:
    """The master address of every broker in ``topic``'s route, by broker name."""
    route, _raw = await admin.topic_route(topic)
    addrs = [bd.master_addr for bd in sorted(route.brokers.values(), key=lambda b: b.broker_name)]
    return [a for a in addrs if a]


# -- brokerConsumeStats ----------------------------------------------------------------------------------------------


def _broker_consume_stats_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-b", "--brokerAddr", required=True, help="broker address ip:port")
    p.add_argument("-o", "--order", type=java_bool, default=False, help="only ordered topics (true/false)")
    p.add_argument("-l", "--level", type=int, default=0, help="print only queues whose diff is at least this")
    p.add_argument("-t", "--timeoutMillis", type=int, default=50_000, help="request timeout (ms)")


@command("brokerConsumeStats", "Fetch broker consume stats data", _broker_consume_stats_args)
async def broker_consume_stats(admin: AdminClient, a: argparse.Namespace) -> int:
    stats = await admin.broker_consume_stats(a.brokerAddr, a.order, a.timeoutMillis / 1000)
    print(offset_header(group=True))
    for entry in stats.consume_stats_list:
        for group, per_topic in entry.items():
            for cs in per_topic:
                for mq, w in sorted(cs.offset_table.items()):
                    if w.broker_offset - w.consumer_offset >= a.level:
                        print(offset_row(mq, w.broker_offset, w.consumer_offset, w.last_timestamp, group))
    print(f"\nDiff Total: {stats.total_diff}")
    return 0


# -- cloneGroupOffset ------------------------------------------------------------------------------------------------


def _clone_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-s", "--srcGroup", required=True, help="source consumer group")
    p.add_argument("-d", "--destGroup", required=True, help="destination consumer group")
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-o", "--offline", type=java_bool, default=False, help="the group or the topic is offline")


@command("cloneGroupOffset", "clone offset from other group.", _clone_args)
async def clone_group_offset(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in await _route_masters(admin, a.topic):
        await admin.clone_group_offset(addr, a.srcGroup, a.destGroup, a.topic, a.offline)
    print(f"clone group offset success. srcGroup[{a.srcGroup}], destGroup=[{a.destGroup}], topic[{a.topic}]")
    return 0


# -- queryCq ---------------------------------------------------------------------------------------------------------


def _query_cq_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-q", "--queue", type=int, required=True, help="queue id")
    p.add_argument("-i", "--index", type=int, required=True, help="first queue offset")
    p.add_argument("-c", "--count", type=int, default=10, help="how many units (10)")
    p.add_argument("-b", "--broker", help="broker address (default: the route's first broker)")
    p.add_argument("-g", "--consumer", help="consumer group: also show its subscription")


@command("queryCq", "Query cq command.", _query_cq_args)
async def query_cq(admin: AdminClient, a: argparse.Namespace) -> int:
    addr = a.broker
    if not addr:
        masters = await _route_masters(admin, a.topic)
        if not masters:
            raise MQClientError(f"No topic route data! topic={a.topic}")
        addr = masters[0]
    body, remark = await admin.query_consume_queue(addr, a.topic, a.queue, a.index, a.count, a.consumer)
    if body.subscription_data is not None:
        print(f"Subscription data: \n{subscription_json(body.subscription_data)}\n{SEPARATOR}")
    if body.filter_data is not None:
        print(f"Filter data: \n{body.filter_data}\n{SEPARATOR}")
    print(f"Queue data: \nmax: {body.max_queue_index}, min: {body.min_queue_index}\n{SEPARATOR}")
    if remark:
        print(remark)
    for idx, unit in enumerate(body.queue_data, a.index):
        print(f"idx: {idx}\n{consume_queue_unit(unit)}\n{SEPARATOR}")
    return 0


# -- connections and running info ------------------------------------------------------------------------------------


def _producer_conn_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-g", "--producerGroup", required=True)
    p.add_argument("-t", "--topic", required=True)


@command("producerConnection", "Query producer's socket connection and client version", _producer_conn_args)
async def producer_connection(admin: AdminClient, a: argparse.Namespace) -> int:
    """The group's connections on every broker of the topic; a broker's refusal counts only when no broker knows
    the group (then its error is the answer)."""
    conns: dict[tuple[str, str], Connection] = {}
    error: RemotingError | None = None
    for addr in await _route_masters(admin, a.topic):
        try:
            pc = await admin.producer_connections(addr, a.producerGroup)
        except RemotingError as exc:
            error = error or exc
            continue
        conns.update(((c.client_id, c.client_addr), c) for c in pc.connection_set)
    if not conns:
        raise error or MQClientError(f"Not found the producer group connection: {a.producerGroup}")
    print_connections(conns.values())
    return 0


def _consumer_status_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-g", "--consumerGroup", required=True)
    p.add_argument("-i", "--clientId", help="only this client")
    p.add_argument("-s", "--jstack", action="store_true", help="ask the client for its thread stacks")
    p.add_argument("-b", "--brokerAddr", help="relay through this broker (default: one where the group is online)")


@command("consumerStatus", "Query consumer's internal data structure", _consumer_status_args)
async def consumer_status(admin: AdminClient, a: argparse.Namespace) -> int:
    addr, conn = await admin.find_consumer_connection(a.consumerGroup, a.brokerAddr)
    if a.clientId:
        print_running_info(await admin.consumer_running_info(addr, a.consumerGroup, a.clientId, a.jstack))
        return 0
    subscriptions: list[frozenset[tuple[str, str]]] = []
    failed = 0
    for i, c in enumerate(sorted(conn.connection_set, key=lambda c: c.client_id), 1):
        try:
            info = await admin.consumer_running_info(addr, a.consumerGroup, c.client_id, a.jstack)
        except RemotingError as exc:
            print(f"mqadmin consumerStatus: {c.client_id}: " + " ".join(str(exc).split()), file=sys.stderr)
            failed += 1
            continue
        print(row((5, 41), [f"{i:03d}", c.client_id, c.version]))
        print_running_info(info)
        print()
        subscriptions.append(frozenset((s.topic, s.sub_string) for s in info.subscriptions))
    if subscriptions and len(set(subscriptions)) == 1:
        print("\n\nSame subscription in the same group of consumer")
    elif subscriptions:
        print("\n\nWARN: Different subscription in the same group of consumer!!!")
    return 1 if failed else 0


def _get_consumer_status_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-g", "--group", required=True)
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-i", "--originClientId", default="", help="only this client id")


@command("getConsumerStatus", "get consumer status from client.", _get_consumer_status_args)
async def get_consumer_status(admin: AdminClient, a: argparse.Namespace) -> int:
    table: dict[str, dict[MessageQueue, int]] = {}
    for addr in await _route_masters(admin, a.topic):
        for cid, offsets in (await admin.consumer_status(addr, a.topic, a.group, a.originClientId)).items():
            table.setdefault(cid, {}).update(offsets)
    print(f"get consumer status from client. group={a.group}, topic={a.topic}, originClientId={a.originClientId}")
    widths = (52, 17, 17)
    print(row(widths, ["#clientId", "#brokerName", "#queueId", "#offset"]))
    for cid, offsets in sorted(table.items()):
        for mq, off in sorted(offsets.items()):
            print(row(widths, [cid, mq.broker_name, mq.queue_id, off]))
    return 0


# -- topics and name server ------------------------------------------------------------------------------------------


@command("topicClusterList", "get cluster info for topic", lambda p: p.add_argument("-t", "--topic", required=True))
async def topic_cluster_list(admin: AdminClient, a: argparse.Namespace) -> int:
    for cluster in await admin.topic_clusters(a.topic):
        print(cluster)
    return 0


@command("getNamesrvConfig", "Get configs of name server.", lambda p: None)
async def get_namesrv_config(admin: AdminClient, a: argparse.Namespace) -> int:
    for addr in admin.namesrv_addrs:
        print_config(addr, await admin.namesrv_config(addr))
    return 0


def _update_namesrv_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-k", "--key", required=True, type=one_line)
    p.add_argument("-v", "--value", required=True, type=one_line)


@command("updateNamesrvConfig", "Update configs of name server.", _update_namesrv_args)
async def update_namesrv_config(admin: AdminClient, a: argparse.Namespace) -> int:
    """Every name server of ``-n``; a refused key (the name server's allow-list) stops at the first refusal."""
    for addr in admin.namesrv_addrs:
        await admin.update_namesrv_config(addr, {a.key: a.value})
    print(f"update name server config success![{', '.join(admin.namesrv_addrs)}]\n{a.key} : {a.value}")
    return 0
