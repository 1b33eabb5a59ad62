"""``mqadmin`` commands for broker maintenance, exports and cluster-wide probes (RocketMQ 4.9 tools' names and option
letters; registered in ``registry.COMMANDS`` on import):

====================== =========================================== ==============================================
command                options                                     how
====================== =========================================== ==============================================
cleanExpiredCQ         [-b brokerAddr | -c cluster]                CLEAN_EXPIRED_CONSUMEQUEUE (306) per master
deleteExpiredCommitLog [-b brokerAddr | -c cluster]                DELETE_EXPIRED_COMMITLOG (329) per master
cleanUnusedTopic       [-b brokerAddr | -c cluster]                CLEAN_UNUSED_TOPIC (316) per master
producer               -b brokerAddr                               GET_ALL_PRODUCER_INFO (328)
exportMetadata         (-c cluster | -b brokerAddr) [-f dir] [-t]  GET_ALL_TOPIC_CONFIG (21) and
                       [-g] [-s]                                   GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201)
exportConfigs          -c cluster [-f dir]                         GET_BROKER_CONFIG (26), GET_NAMESRV_CONFIG (319)
exportMetrics          -c cluster [-f dir]                         GET_BROKER_RUNTIME_INFO (28) and the tables
====================== =========================================== ==============================================

Without ``-b``/``-c`` the maintenance commands ask every master. The exports write J's file names
(``metadata.json``/``topic.json``/``subscriptionGroup.json``, ``configs.json``, ``metrics.json``) under ``-f``
(default ``<tmp>/rocketmq/export``) and print ``export <path> success``. ``producer`` takes ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from typing import Any

from client.admin.admin_client import AdminClient
from client.admin.output import json_arg, print_json
from client.admin.registry import command, target_args
from client.errors import MQClientError
from protocol.bodies import decode_properties_text, loads_lenient
from protocol.codes import RequestCode
from protocol.errors import RemotingError
from protocol.rules import DLQ_PREFIX, RETRY_PREFIX

DEFAULT_EXPORT_DIR = os.path.join(tempfile.gettempdir(), "rocketmq", "export")


async def masters(admin: AdminClient, a: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(cluster, brokerName, master address) of ``-b``, of ``-c``'s brokers, or of every broker."""
    info = await admin.cluster_info()
    out = []
    for cluster, names in sorted((info.get("clusterAddrTable") or {}).items()):
        if getattr(a, "clusterName", None) and cluster != a.clusterName:
            continue
        for name in sorted(names or []):
            addr = ((info.get("brokerAddrTable") or {}).get(name, {}).get("brokerAddrs") or {}).get("0")
            if addr and (not getattr(a, "brokerAddr", None) or addr == a.brokerAddr):
                out.append((cluster, name, addr))
    if getattr(a, "brokerAddr", None) and not out:
        out.append(("", "", a.brokerAddr))
    if not out:
        raise MQClientError("no broker found (give -b brokerAddr or -c clusterName)")
    return out


async def _maintenance(admin: AdminClient, a: argparse.Namespace, code: int) -> int:
    failed = 0
    for _cluster, _name, addr in await masters(admin, a):
        try:
            resp = await admin.call(addr, code)
        except RemotingError as exc:
            print(f"{addr}: false ({' '.join(str(exc).split())})")
            failed += 1
            continue
        print(f"{addr}: success{f' ({resp.remark})' if resp.remark else ''}")
    return 1 if failed else 0


@command("cleanExpiredCQ", "Clean expired ConsumeQueue on broker.", target_args)
async def clean_expired_cq(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _maintenance(admin, a, RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE)


@command("deleteExpiredCommitLog", "Delete expired CommitLog files", target_args)
async def delete_expired_commit_log(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _maintenance(admin, a, RequestCode.DELETE_EXPIRED_COMMITLOG)


@command("cleanUnusedTopic", "Clean unused topic on broker.", target_args)
async def clean_unused_topic(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _maintenance(admin, a, RequestCode.CLEAN_UNUSED_TOPIC)


# -- producer --------------------------------------------------------------------------------------------------------


def _producer_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-b", "--broker", required=True, help="broker address ip:port")
    json_arg(p)


@command("producer", "Query producer's instances, connection, status, etc.", _producer_args)
async def producer(admin: AdminClient, a: argparse.Namespace) -> int:
    resp = await admin.call(a.broker, RequestCode.GET_ALL_PRODUCER_INFO)
    data: dict[str, list[dict[str, Any]]] = (loads_lenient(resp.body) if resp.body else {}).get("data") or {}
    if a.json:
        print_json(data)
        return 0
    for group, producers in sorted(data.items()):
        if not producers:
            print(f"producer group ({group}) instances are empty")
        for p in producers:
            print(
                f"producer group ({group}) instance : ProducerInfo{{clientId={p.get('clientId')}, "
                f"remoteIP={p.get('remoteIP')}, language={p.get('language')}, version={p.get('version')}, "
                f"lastUpdateTimestamp={p.get('lastUpdateTimestamp')}}}"
            )
    return 0


# -- exports ---------------------------------------------------------------------------------------------------------


def _export_args(p: argparse.ArgumentParser, *, broker: bool = False) -> None:
    if broker:
        target_args(p)
    else:
        p.add_argument("-c", "--clusterName", required=True, help="the cluster to export")
    p.add_argument("-f", "--filePath", default=DEFAULT_EXPORT_DIR, help=f"directory (default {DEFAULT_EXPORT_DIR})")


def _write(directory: str, name: str, obj: Any) -> str:
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False, sort_keys=True)
    os.replace(tmp, path)
    print(f"export {path} success")
    return path


def _metadata_args(p: argparse.ArgumentParser) -> None:
    _export_args(p, broker=True)
    p.add_argument("-t", "--topic", action="store_true", help="only export topic metadata")
    p.add_argument("-g", "--subscriptionGroup", action="store_true", help="only export subscriptionGroup metadata")
    p.add_argument("-s", "--specialTopic", action="store_true", help="also %%RETRY%% and %%DLQ%% topics")


async def _tables(admin: AdminClient, addr: str) -> tuple[dict[str, Any], dict[str, Any]]:
    topics = loads_lenient((await admin.call(addr, RequestCode.GET_ALL_TOPIC_CONFIG)).body or b"{}")
    groups = loads_lenient((await admin.call(addr, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)).body or b"{}")
    return dict(topics.get("topicConfigTable") or {}), dict(groups.get("subscriptionGroupTable") or {})


@command("exportMetadata", "export metadata", _metadata_args)
async def export_metadata(admin: AdminClient, a: argparse.Namespace) -> int:
    topics: dict[str, Any] = {}
    groups: dict[str, Any] = {}
    for _cluster, _name, addr in await masters(admin, a):
        t, g = await _tables(admin, addr)
        topics.update(t)
        groups.update(g)
    if not a.specialTopic:
        topics = {k: v for k, v in topics.items() if not k.startswith((RETRY_PREFIX, DLQ_PREFIX))}
    if a.topic:
        _write(a.filePath, "topic.json", {"topicConfigTable": topics})
    elif a.subscriptionGroup:
        _write(a.filePath, "subscriptionGroup.json", {"subscriptionGroupTable": groups})
    else:
        exported = {"topicConfigTable": topics, "subscriptionGroupTable": groups, "exportTime": int(time.time() * 1000)}
        _write(a.filePath, "metadata.json", exported)
    return 0


# J ExportConfigsCommand.needBrokerProprties
_EXPORTED_BROKER_KEYS = (
    "brokerClusterName", "brokerId", "brokerName", "brokerRole", "fileReservedTime", "filterServerNums",
    "flushDiskType", "maxMessageSize", "messageDelayLevel", "msgTraceTopicName", "slaveReadEnable", "traceOn",
    "traceTopicEnable", "useTLS", "autoCreateTopicEnable", "autoCreateSubscriptionGroup",
)  # fmt: skip


@command("exportConfigs", "export configs", _export_args)
async def export_configs(admin: AdminClient, a: argparse.Namespace) -> int:
    found = await masters(admin, a)
    broker_configs: dict[str, dict[str, str]] = {}
    for _cluster, name, addr in found:
        props = decode_properties_text((await admin.call(addr, RequestCode.GET_BROKER_CONFIG)).body)
        broker_configs[name] = {k: props[k] for k in _EXPORTED_BROKER_KEYS if k in props}
    namesrv_configs = {}
    for ns in admin.namesrv_addrs:
        try:
            namesrv_configs[ns] = await admin.namesrv_config(ns)
        except RemotingError:
            continue
    scale = {"namesrvSize": len(admin.namesrv_addrs), "masterBrokerSize": len(found), "slaveBrokerSize": 0}
    _write(
        a.filePath,
        "configs.json",
        {"brokerConfigs": broker_configs, "namesrvConfigs": namesrv_configs, "clusterScale": scale},
    )
    return 0


def _first_tps(text: str) -> float:
    try:
        return float(text.split()[0]) if text.strip() else 0.0
    except ValueError:
        return 0.0


@command("exportMetrics", "export metrics", _export_args)
async def export_metrics(admin: AdminClient, a: argparse.Namespace) -> int:
    brokers: dict[str, Any] = {}
    totals = {"totalNormalInTps": 0.0, "totalNormalOutTps": 0.0}
    day_totals = {"normalOneDayInNum": 0, "normalOneDayOutNum": 0}
    for _cluster, name, addr in await masters(admin, a):
        rt = await admin.runtime_info(addr)
        topics, groups = await _tables(admin, addr)
        in_tps, out_tps = _first_tps(rt.get("putTps", "")), _first_tps(rt.get("getTransferedTps", ""))
        in_day = int(rt.get("msgPutTotalTodayNow", "0") or 0) - int(rt.get("msgPutTotalTodayMorning", "0") or 0)
        out_day = int(rt.get("msgGetTotalTodayNow", "0") or 0) - int(rt.get("msgGetTotalTodayMorning", "0") or 0)
        brokers[name] = {
            "runtimeEnv": {"cpuNum": os.cpu_count(), "totalMemKBytes": rt.get("totalMemKBytes")},
            "runtimeQuota": {
                "diskRatio": {
                    "commitLogDiskRatio": rt.get("commitLogDiskRatio"),
                    "consumeQueueDiskRatio": rt.get("consumeQueueDiskRatio"),
                },
                "tps": {"normalInTps": in_tps, "normalOutTps": out_tps},
                "oneDayNum": {"normalOneDayInNum": in_day, "normalOneDayOutNum": out_day},
                "messageAverageSize": rt.get("putMessageAverageSize"),
                "topicSize": len(topics),
                "groupSize": len(groups),
            },
            "runtimeVersion": {"rocketmqVersion": rt.get("brokerVersionDesc")},
        }
        totals["totalNormalInTps"] += in_tps
        totals["totalNormalOutTps"] += out_tps
        day_totals["normalOneDayInNum"] += in_day
        day_totals["normalOneDayOutNum"] += out_day
    _write(a.filePath, "metrics.json", {**brokers, "totalData": {"totalTps": totals, "totalOneDayNum": day_totals}})
    return 0
