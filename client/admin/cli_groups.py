"""``mqadmin`` commands about consumer groups and their lag (RocketMQ 4.9 tools' names and option letters; registered
in ``registry.COMMANDS`` on import):

====================== ======================================= ===============================================
command                options                                 how
====================== ======================================= ===============================================
consumerProgress       [-g group [-t topic] [-s showClientIP]] without ``-g``: every group (one ``%RETRY%`` topic
                                                               each) with its clients and lag; with ``-g``: the
                                                               per-queue lag table
skipAccumulatedMessage -g group -t topic [-f force]            INVOKE_BROKER_TO_RESET_OFFSET to the max offset
getConsumerConfig      -g group                                GET_ALL_SUBSCRIPTIONGROUP_CONFIG per master
statsAll               [-a activeTopic] [-t topic]             per topic and group: lag, TPS and 24 h counts
====================== ======================================= ===============================================

statsAll's TPS and 24-hour counts come from VIEW_BROKER_STATS_DATA when the broker serves it (TOPIC_PUT_NUMS,
GROUP_GET_NUMS), else they print as 0. Every command here takes ``--json``.
"""

from __future__ import annotations

import argparse
from typing import Any

from client.admin.admin_client import AdminClient
from client.admin.formatting import fmt_time
from client.admin.output import java, json_arg, print_json, table
from client.admin.registry import command
from client.errors import MQClientError
from client.message import MessageQueue
from protocol.bodies import ConsumerConnection, ConsumeStats, GroupList, loads_lenient
from protocol.codes import RequestCode
from protocol.errors import BrokerError, RemotingError
from protocol.rules import DLQ_PREFIX, RETRY_PREFIX


def version_desc(ordinal: int) -> str:
    """J ``MQVersion.getVersionDesc``: the enum name of a version ordinal (407 → ``V4_9_7``)."""
    diff = ordinal - 407
    d = diff // 2 + 497
    if ordinal <= 0 or not 301 <= d <= 599:
        return f"V{ordinal}"
    name = f"V{d // 100}_{d // 10 % 10}_{d % 10}"
    return name + "_SNAPSHOT" if diff % 2 else name


async def group_consume_stats(admin: AdminClient, group: str, topic: str | None = None) -> ConsumeStats:
    """J ``examineConsumeStats``: GET_CONSUME_STATS on every master, merged."""
    table_: dict[MessageQueue, Any] = {}
    tps = 0.0
    for addr in await admin.broker_addrs():
        try:
            stats = await admin.consume_stats(addr, group, topic)
        except RemotingError:
            continue
        table_.update(stats.offset_table)
        tps += stats.consume_tps
    return ConsumeStats(table_, tps)


async def _connection(admin: AdminClient, group: str) -> ConsumerConnection | None:
    try:
        return (await admin.find_consumer_connection(group))[1]
    except (RemotingError, MQClientError):
        return None


# -- consumerProgress ------------------------------------------------------------------------------------------------


def _progress_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-g", "--groupName", help="consumer group (default: every group)")
    p.add_argument("-t", "--topic", help="only this topic (with -g)")
    p.add_argument("-s", "--showClientIP", action="store_true", help="show the client each queue is allocated to")
    json_arg(p)


@command("consumerProgress", "Query consumers's progress, speed", _progress_args)
async def consumer_progress(admin: AdminClient, a: argparse.Namespace) -> int:
    if not a.groupName:
        return await _all_groups(admin, a)
    stats = await group_consume_stats(admin, a.groupName, a.topic)
    if not stats.offset_table:
        raise MQClientError(f"no consume progress of group {a.groupName} (no broker knows it)")
    owners = await _queue_owners(admin, a.groupName) if a.showClientIP else {}
    heads = ["#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset"]
    heads += ["#Client IP"] if a.showClientIP else []
    heads += ["#Diff", "#LastTime"]
    rows: list[list[object]] = []
    for mq, w in sorted(stats.offset_table.items()):
        cells: list[object] = [mq.topic, mq.broker_name, mq.queue_id, w.broker_offset, w.consumer_offset]
        if a.showClientIP:
            cells.append(owners.get(mq, "N/A"))
        cells += [w.broker_offset - w.consumer_offset, fmt_time(w.last_timestamp)]
        rows.append(cells)
    if a.json:
        print_json(
            {
                "queues": [dict(zip([h.lstrip("#") for h in heads], r, strict=True)) for r in rows],
                "consumeTps": round(stats.consume_tps, 2),
                "diffTotal": stats.total_diff(),
            }
        )
        return 0
    widths = [40, 24, 6, 16, 18] + ([18] if a.showClientIP else []) + [10]
    table(a, heads, rows, widths)
    print(f"\nConsume TPS: {stats.consume_tps:.2f}")
    print(f"Diff Total: {stats.total_diff()}")
    in_flight = sum(max(w.pull_offset - w.consumer_offset, 0) for w in stats.offset_table.values())
    if in_flight:  # a POP group of RocketMQ 5 clients: popped, not yet acked
        print(f"InFlight Total: {in_flight}")
    return 0


async def _queue_owners(admin: AdminClient, group: str) -> dict[MessageQueue, str]:
    """J ``getMessageQueueAllocationResult``: queue → the IP of the client holding it (from its running info)."""
    owners: dict[MessageQueue, str] = {}
    try:
        addr, conn = await admin.find_consumer_connection(group)
    except (RemotingError, MQClientError):
        return owners
    for c in conn.connection_set:
        try:
            info = await admin.consumer_running_info(addr, group, c.client_id, False)
        except RemotingError:
            continue
        for mq in info.mq_table:
            owners[mq] = c.client_id.split("@")[0]
    return owners


async def _all_groups(admin: AdminClient, a: argparse.Namespace) -> int:
    infos: list[dict[str, Any]] = []
    for topic in await admin.topic_list():
        if not topic.startswith(RETRY_PREFIX):
            continue
        group = topic[len(RETRY_PREFIX) :]
        stats = await group_consume_stats(admin, group)
        conn = await _connection(admin, group)
        count = len(conn.connection_set) if conn is not None else 0
        online = conn is not None and count > 0
        version = min((c.version for c in conn.connection_set), default=0) if conn is not None else 0
        infos.append(
            {
                "Group": group,
                "Count": count,
                "Version": version_desc(version) if online else "OFFLINE",
                "Type": ("PULL" if conn.consume_type == "CONSUME_ACTIVELY" else "PUSH") if online and conn else "",
                "Model": java(conn.message_model.value if conn and conn.message_model else "") if online else "",
                "TPS": int(stats.consume_tps),
                "Diff Total": stats.total_diff(),
            }
        )
    infos.sort(key=lambda i: (-i["Diff Total"], -i["Count"], i["Group"]))
    heads = ["#Group", "#Count", "#Version", "#Type", "#Model", "#TPS", "#Diff Total"]
    table(a, heads, [[i[h.lstrip("#")] for h in heads] for i in infos], [66, 8, 25, 7, 16, 9])
    return 0


# -- skipAccumulatedMessage ------------------------------------------------------------------------------------------


def _skip_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-g", "--group", required=True)
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-f", "--force", default="true", help="true/false (default true)")
    json_arg(p)


@command("skipAccumulatedMessage", "Skip all messages that are accumulated (not consumed) currently", _skip_args)
async def skip_accumulated_message(admin: AdminClient, a: argparse.Namespace) -> int:
    """J: resetOffsetByTime with timestamp -1 (each queue's max offset); consumers online follow at once."""
    route, _raw = await admin.topic_route(a.topic)
    rows: list[list[object]] = []
    for bd in sorted(route.brokers.values(), key=lambda b: b.broker_name):
        if not bd.master_addr:
            continue
        table_ = await admin.reset_offset_by_time(bd.master_addr, a.topic, a.group, -1, a.force.lower() == "true")
        rows += [[mq.broker_name, mq.queue_id, off] for mq, off in sorted(table_.items())]
    table(a, ["#brokerName", "#queueId", "#offset"], rows, [42, 42])
    return 0


# -- getConsumerConfig -----------------------------------------------------------------------------------------------

_GROUP_FIELDS = (
    "groupName",
    "consumeEnable",
    "consumeFromMinEnable",
    "consumeBroadcastEnable",
    "retryQueueNums",
    "retryMaxTimes",
    "brokerId",
    "whichBrokerWhenConsumeSlowly",
    "notifyConsumerIdsChangedEnable",
)


def _consumer_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-g", "--groupName", required=True)
    json_arg(p)


@command("getConsumerConfig", "get consumer config by subscription group name!", _consumer_config_args)
async def get_consumer_config(admin: AdminClient, a: argparse.Namespace) -> int:
    info = await admin.cluster_info()
    found: list[dict[str, Any]] = []
    for cluster, names in sorted((info.get("clusterAddrTable") or {}).items()):
        for name in sorted(names):
            addr = ((info.get("brokerAddrTable") or {}).get(name, {}).get("brokerAddrs") or {}).get("0")
            if not addr:
                continue
            resp = await admin.call(addr, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
            table_ = _group_table(resp.body).get(a.groupName)
            if table_ is not None:
                found.append({"clusterName": cluster, "brokerName": name, "brokerAddr": addr, "config": table_})
    if not found:
        raise MQClientError(f"no subscription group {a.groupName} on any broker")
    if a.json:
        print_json(found)
        return 0
    for f in found:
        print(f"============================{f['brokerAddr']}============================")
        print(f"{'clusterName':<40}=  {f['clusterName']}")
        print(f"{'brokerName':<40}=  {f['brokerName']}")
        cfg = f["config"]
        for k in [*_GROUP_FIELDS, *(k for k in cfg if k not in _GROUP_FIELDS)]:
            if k in cfg:
                print(f"{k:<40}=  {java(cfg[k])}")
    return 0


def _group_table(body: bytes) -> dict[str, dict[str, Any]]:
    """The ``subscriptionGroupTable`` of a GET_ALL_SUBSCRIPTIONGROUP_CONFIG body: group → its config fields."""
    raw = loads_lenient(body) if body else {}
    table_ = raw.get("subscriptionGroupTable") if isinstance(raw, dict) else None
    return {str(k): dict(v) for k, v in (table_ or {}).items() if isinstance(v, dict)}


# -- statsAll --------------------------------------------------------------------------------------------------------


async def _stats_data(admin: AdminClient, addr: str, name: str, key: str) -> tuple[float, int]:
    """(minute TPS, 24-hour count) of one broker stats item; (0, 0) when the broker does not serve them."""
    try:
        resp = await admin.call(addr, RequestCode.VIEW_BROKER_STATS_DATA, {"statsName": name, "statsKey": key})
    except (BrokerError, RemotingError):
        return 0.0, 0
    raw = loads_lenient(resp.body) if resp.body else {}
    minute, hour, day = (raw.get(k) or {} for k in ("statsMinute", "statsHour", "statsDay"))
    total = next((int(s.get("sum", 0)) for s in (day, hour, minute) if int(s.get("sum", 0))), 0)
    return float(minute.get("tps", 0.0)), total


def _stats_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-a", "--activeTopic", action="store_true", help="only topics with traffic in the last 24 h")
    p.add_argument("-t", "--topic", help="only this topic")
    json_arg(p)


@command("statsAll", "Topic and Consumer tps stats", _stats_args)
async def stats_all(admin: AdminClient, a: argparse.Namespace) -> int:
    rows: list[list[object]] = []
    for topic in sorted(await admin.topic_list()):
        if topic.startswith((RETRY_PREFIX, DLQ_PREFIX)) or (a.topic and topic != a.topic):
            continue
        try:
            route, _raw = await admin.topic_route(topic)
        except BrokerError:
            continue
        masters = [bd.master_addr for bd in route.brokers.values() if bd.master_addr]
        in_tps, in_day = 0.0, 0
        groups: set[str] = set()
        for addr in masters:
            tps, day = await _stats_data(admin, addr, "TOPIC_PUT_NUMS", topic)
            in_tps, in_day = in_tps + tps, in_day + day
            try:
                resp = await admin.call(addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, {"topic": topic})
                groups |= set(GroupList.decode(resp.body).group_list)
            except RemotingError:
                pass
        if not groups:
            if not a.activeTopic or in_day > 0:
                rows.append([topic, "", 0, f"{in_tps:.2f}", "", in_day, "NO_CONSUMER"])
            continue
        for group in sorted(groups):
            out_tps, out_day = 0.0, 0
            for addr in masters:
                tps, day = await _stats_data(admin, addr, "GROUP_GET_NUMS", f"{topic}@{group}")
                out_tps, out_day = out_tps + tps, out_day + day
            accumulate = max(0, (await group_consume_stats(admin, group, topic)).total_diff())
            if not a.activeTopic or in_day > 0 or out_day > 0:
                rows.append([topic, group, accumulate, f"{in_tps:.2f}", f"{out_tps:.2f}", in_day, out_day])
    heads = ["#Topic", "#Consumer Group", "#Accumulation", "#InTPS", "#OutTPS", "#InMsg24Hour", "#OutMsg24Hour"]
    table(a, heads, rows, [34, 34, 14, 12, 12, 15])
    return 0


__all__ = ["group_consume_stats", "version_desc"]
