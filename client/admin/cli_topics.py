"""``mqadmin`` commands for topic permissions, order config and queue allocation (RocketMQ 4.9 tools' names and
option letters; registered in ``registry.COMMANDS`` on import):

================ =================================================== ==============================================
command          options                                             how
================ =================================================== ==============================================
updateTopicPerm  -t topic -p perm (-b brokerAddr | -c clusterName)   UPDATE_AND_CREATE_TOPIC with the route's queue
                                                                     counts and the new perm, per master
addWritePerm     -b brokerName                                       ADD_WRITE_PERM_OF_BROKER on every name server
wipeWritePerm    -b brokerName                                       WIPE_WRITE_PERM_OF_BROKER on every name server
updateOrderConf  -t topic -m get|put|delete [-v brokerName:num;…]    KV namespace ORDER_TOPIC_CONFIG
allocateMQ       -t topic -i ipList                                  AllocateMessageQueueAveragely over the route
================ =================================================== ==============================================

``addWritePerm``/``wipeWritePerm`` ask each name server of ``-n`` (J's tool does the same) and print one line per
name server; the exit code is 1 when any of them failed. Producers honour the perm on every route (including the
TBW102 fallback), so a wiped broker takes no new messages from them until ``addWritePerm``.
"""

from __future__ import annotations

import argparse
import sys

from client.admin.admin_client import AdminClient
from client.admin.output import json_arg, print_json
from client.admin.registry import command, target_args, target_brokers
from client.consumer.allocate import allocate_averagely
from client.errors import MQClientError
from protocol.errors import RemotingError

ORDER_NAMESPACE = "ORDER_TOPIC_CONFIG"


def perm_text(perm: int) -> str:
    """J ``PermName.perm2String``: ``RW-`` for 6 (read, write, inherit)."""
    return ("R" if perm & 4 else "-") + ("W" if perm & 2 else "-") + ("X" if perm & 1 else "-")


def topic_config_text(topic: str, read: int, write: int, perm: int, sys_flag: int = 0, order: bool = False) -> str:
    """J ``TopicConfig.toString()``."""
    return (
        f"TopicConfig [topicName={topic}, readQueueNums={read}, writeQueueNums={write}, perm={perm_text(perm)}, "
        f"topicFilterType=SINGLE_TAG, topicSysFlag={sys_flag}, order={'true' if order else 'false'}]"
    )


def _perm(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected 2 (W), 4 (R) or 6 (RW)") from None
    if value not in (2, 4, 6):
        raise argparse.ArgumentTypeError(f"{value}: expected 2 (W), 4 (R) or 6 (RW)")
    return value


def _update_perm_args(p: argparse.ArgumentParser) -> None:
    target_args(p)
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-p", "--perm", required=True, type=_perm, help="2 = W, 4 = R, 6 = RW")


@command("updateTopicPerm", "Update topic perm", _update_perm_args)
async def update_topic_perm(admin: AdminClient, a: argparse.Namespace) -> int:
    route, _raw = await admin.topic_route(a.topic)
    if not route.queues:
        raise MQClientError(f"No topic route data! topic={a.topic}")
    wanted = set(await target_brokers(admin, a))
    changed = 0
    for qd in sorted(route.queues, key=lambda q: q.broker_name):
        bd = route.brokers.get(qd.broker_name)
        addr = bd.master_addr if bd is not None else None
        if addr is None or addr not in wanted:
            continue
        if qd.perm == a.perm:
            print(f"new perm equals to the old one! {addr}")
            continue
        await admin.create_topic(addr, a.topic, qd.read_queue_nums, qd.write_queue_nums, a.perm, False)
        print(f"update topic perm from {qd.perm} to {a.perm} in {addr} success.")
        print(topic_config_text(a.topic, qd.read_queue_nums, qd.write_queue_nums, a.perm) + ".")
        changed += 1
    if not changed and not any(
        (bd := route.brokers.get(q.broker_name)) is not None and bd.master_addr in wanted for q in route.queues
    ):
        raise MQClientError(f"topic {a.topic} is not on the broker(s) {', '.join(sorted(wanted))}")
    return 0


async def _per_namesrv(admin: AdminClient, broker: str, add: bool) -> int:
    verb = "add" if add else "wipe"
    failed = 0
    for ns in admin.namesrv_addrs:
        try:
            n = await (admin.add_write_perm(broker, ns) if add else admin.wipe_write_perm(broker, ns))
        except RemotingError as exc:
            print(f"{verb} write perm of broker[{broker}] in name server[{ns}] Failed")
            print(f"mqadmin {verb}WritePerm: {ns}: " + " ".join(str(exc).split()), file=sys.stderr)
            failed += 1
            continue
        print(f"{verb} write perm of broker[{broker}] in name server[{ns}] OK, {n}")
    return 1 if failed else 0


@command(
    "addWritePerm",
    "Add write perm of broker in all name server you defined in the -n param",
    lambda p: p.add_argument("-b", "--brokerName", required=True),
)
async def add_write_perm(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _per_namesrv(admin, a.brokerName, True)


@command(
    "wipeWritePerm",
    "Wipe write perm of broker in all name server you defined in the -n param",
    lambda p: p.add_argument("-b", "--brokerName", required=True),
)
async def wipe_write_perm(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _per_namesrv(admin, a.brokerName, False)


def _order_conf_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-v", "--orderConf", help="brokerName1:num;brokerName2:num (with -m put)")
    p.add_argument("-m", "--method", required=True, choices=["get", "put", "delete"])
    json_arg(p)


@command("updateOrderConf", "Create or update or delete order conf", _order_conf_args)
async def update_order_conf(admin: AdminClient, a: argparse.Namespace) -> int:
    if a.method == "get":
        conf = await admin.get_kv(ORDER_NAMESPACE, a.topic)
        if a.json:
            print_json({"topic": a.topic, "orderConf": conf})
        else:
            print(f"get orderConf success. topic=[{a.topic}], orderConf=[{conf or ''}] ")
        return 0
    if a.method == "put":
        if not a.orderConf:
            raise MQClientError("please set orderConf with option -v.")
        for item in filter(None, a.orderConf.split(";")):
            name, _, num = item.partition(":")
            if not name or not num.isdigit():
                raise MQClientError(f"bad orderConf item {item!r}, expected brokerName:num")
        await admin.put_kv(ORDER_NAMESPACE, a.topic, a.orderConf)
        print(f"update orderConf success. topic=[{a.topic}], orderConf=[{a.orderConf}]")
        return 0
    await admin.delete_kv(ORDER_NAMESPACE, a.topic)
    print(f"delete orderConf success. topic=[{a.topic}]")
    return 0


def _allocate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-i", "--ipList", required=True, help="client ids (ips), comma-separated")


@command("allocateMQ", "Allocate MQ", _allocate_args)
async def allocate_mq(admin: AdminClient, a: argparse.Namespace) -> int:
    """J: the route's read queues shared among ``-i`` by AllocateMessageQueueAveragely, printed as the JSON
    ``RebalanceResult`` (``{"result": {ip: [MessageQueue…]}}``)."""
    route, _raw = await admin.topic_route(a.topic)
    mqs = sorted(route.subscribe_queues())
    ips = [ip.strip() for ip in a.ipList.split(",") if ip.strip()]
    result = {ip: [mq.to_json() for mq in allocate_averagely("", ip, mqs, ips)] for ip in ips}
    print_json({"result": result})
    return 0
