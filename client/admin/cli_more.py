"""The fuller forms of three list commands whose plain form lives in ``cli``: ``clusterList -m [-i sec]`` (the
yesterday/today message totals), ``topicList -c`` (cluster, topic, consumer group), ``topicRoute -l`` (one row per
broker with a ``Total:`` row) — J 4.9's columns — and ``--json`` for all three.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from client.admin.admin_client import AdminClient
from client.admin.output import json_arg, print_json, table
from protocol.bodies import GroupList
from protocol.codes import RequestCode
from protocol.errors import RemotingError
from protocol.rules import DLQ_PREFIX, RETRY_PREFIX

# -- clusterList -----------------------------------------------------------------------------------------------------


def cluster_list_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-m", "--moreStats", action="store_true", help="message totals of yesterday and today")
    p.add_argument("-i", "--interval", type=int, default=0, help="repeat every this many seconds (with -m)")
    json_arg(p)


def _int(table_: dict[str, str], key: str) -> int:
    try:
        return int(table_.get(key, "0"))
    except ValueError:
        return 0


async def _cluster_rows(admin: AdminClient, more: bool) -> list[list[object]]:
    info = await admin.cluster_info()
    rows: list[list[object]] = []
    for cluster, names in sorted((info.get("clusterAddrTable") or {}).items()):
        for name in sorted(names):
            addrs = ((info.get("brokerAddrTable") or {}).get(name) or {}).get("brokerAddrs") or {}
            for bid, addr in sorted(addrs.items(), key=lambda kv: int(kv[0])):
                try:
                    rt = await admin.runtime_info(addr)
                except RemotingError:
                    rt = {}
                if more:
                    rows.append(
                        [
                            cluster,
                            name,
                            _int(rt, "msgPutTotalTodayMorning") - _int(rt, "msgPutTotalYesterdayMorning"),
                            _int(rt, "msgGetTotalTodayMorning") - _int(rt, "msgGetTotalYesterdayMorning"),
                            _int(rt, "msgPutTotalTodayNow") - _int(rt, "msgPutTotalTodayMorning"),
                            _int(rt, "msgGetTotalTodayNow") - _int(rt, "msgGetTotalTodayMorning"),
                        ]
                    )
                else:
                    rows.append([cluster, name, int(bid), addr, rt.get("brokerVersionDesc", ""), rt.get("putTps", "")])
    return rows


async def cluster_list_more(admin: AdminClient, a: argparse.Namespace) -> int:
    while True:
        if a.moreStats:
            heads = [
                "#Cluster Name",
                "#Broker Name",
                "#InTotalYest",
                "#OutTotalYest",
                "#InTotalToday",
                "#OutTotalToday",
            ]
            table(a, heads, await _cluster_rows(admin, True), [18, 34, 15, 15, 15])
        else:
            heads = ["#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Version", "#PutTps"]
            table(a, heads, await _cluster_rows(admin, False), [22, 22, 6, 24, 12])
        if a.interval <= 0:
            return 0
        await asyncio.sleep(a.interval)  # the operator's refresh period (-i), not synchronisation


# -- topicList -------------------------------------------------------------------------------------------------------


def topic_list_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-c", "--clusterModel", action="store_true", help="with each topic's cluster and groups")
    json_arg(p)


async def _cluster_of(admin: AdminClient) -> dict[str, str]:
    """Broker name → its cluster, from the name server's cluster info."""
    info = await admin.cluster_info()
    return {name: cluster for cluster, names in (info.get("clusterAddrTable") or {}).items() for name in names or []}


async def topic_list_more(admin: AdminClient, a: argparse.Namespace) -> int:
    topics = sorted(await admin.topic_list())
    if not a.clusterModel:
        print_json(topics)
        return 0
    cluster_of = await _cluster_of(admin)
    rows: list[list[object]] = []
    for topic in topics:
        if topic.startswith((RETRY_PREFIX, DLQ_PREFIX)):
            continue
        cluster, groups = "", [""]
        try:
            route, _raw = await admin.topic_route(topic)
            names = sorted(route.brokers)
            cluster = cluster_of.get(names[0], "") if names else ""
            masters = [route.brokers[n].master_addr for n in names if route.brokers[n].master_addr]
            if masters:
                resp = await admin.call(str(masters[0]), RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, {"topic": topic})
                groups = sorted(GroupList.decode(resp.body).group_list) or [""]
        except RemotingError:
            pass
        rows += [[cluster, topic, g] for g in groups]
    table(a, ["#Cluster Name", "#Topic", "#Consumer Group"], rows, [22, 50])
    return 0


# -- topicRoute ------------------------------------------------------------------------------------------------------


def topic_route_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-l", "--list", action="store_true", help="one row per broker instead of the JSON")
    json_arg(p)


async def topic_route_more(admin: AdminClient, a: argparse.Namespace) -> int:
    _route, raw = await admin.topic_route(a.topic)
    if not a.list:
        print_json(raw)
        return 0
    cluster_of = await _cluster_of(admin)
    addrs_of: dict[str, Any] = {bd["brokerName"]: bd.get("brokerAddrs") or {} for bd in raw.get("brokerDatas") or []}
    rows: list[list[object]] = []
    total_r = total_w = 0
    for qd in sorted(raw.get("queueDatas") or [], key=lambda q: q["brokerName"]):
        name = qd["brokerName"]
        r, w = int(qd.get("readQueueNums", 0)), int(qd.get("writeQueueNums", 0))
        total_r, total_w = total_r + r, total_w + w
        addrs = json.dumps(addrs_of.get(name, {}), separators=(",", ":"))
        rows.append([cluster_of.get(name, ""), name, addrs, r, w, int(qd.get("perm", 0))])
    heads = ["#ClusterName", "#BrokerName", "#BrokerAddrs", "#ReadQueue", "#WriteQueue", "#Perm"]
    if a.json:
        table(a, heads, rows)
        return 0
    rows.append(["Total:", len(rows), "", total_r, total_w, ""])
    table(a, heads, rows, [46, 33, 51, 11, 12])
    return 0
