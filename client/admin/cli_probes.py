"""``mqadmin`` probes that send test messages and time them (RocketMQ 4.9 tools' names and option letters;
registered in ``registry.COMMANDS`` on import):

============== ===================================== ===========================================================
command        options                               how
============== ===================================== ===========================================================
sendMsgStatus  -b brokerName [-s size] [-c count]    sends to the topic named like the broker; RT per send
checkMsgSendRT -t topic [-a amount] [-s size]        sends to the topic queue after queue; RT per send, average
clusterRT      [-c cluster] [-a amount] [-s size]    per master: sends to its own topic; average RT, successes,
               [-i interval]                         failures
============== ===================================== ===========================================================

Every probe takes ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from client.admin.admin_client import AdminClient
from client.admin.cli_cluster import masters
from client.admin.output import java, json_arg, print_json, table
from client.admin.registry import command
from client.errors import MQClientError
from client.message import Message
from protocol.errors import RemotingError

# -- sends ------------------------------------------------------------------------------------------------------------


def _send_status_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-b", "--brokerName", required=True)
    p.add_argument("-s", "--messageSize", type=int, default=128)
    p.add_argument("-c", "--count", type=int, default=50)
    json_arg(p)


@command("sendMsgStatus", "send msg to broker.", _send_status_args)
async def send_msg_status(admin: AdminClient, a: argparse.Namespace) -> int:
    """J: sends to the topic named like the broker (every broker has it, brokerTopicEnable) and prints the RT."""
    from client import Producer

    rows = []
    async with Producer("PID_SMSC", instance=admin.instance) as p:
        for _ in range(a.count):
            began = time.monotonic()
            r = await p.send(Message(a.brokerName, b"x" * a.messageSize))
            rt = int((time.monotonic() - began) * 1000)
            rows.append((rt, r))
    if a.json:
        print_json(
            [{"rt": rt, "sendStatus": r.send_status.name, "msgId": r.msg_id, "queueId": r.message_queue.queue_id,
              "brokerName": r.message_queue.broker_name} for rt, r in rows]
        )  # fmt: skip
        return 0
    for rt, r in rows:
        print(
            f"rt={rt}ms, SendResult=SendResult [sendStatus={r.send_status.name}, msgId={r.msg_id}, "
            f"offsetMsgId={r.offset_msg_id}, messageQueue={r.message_queue}, queueOffset={r.queue_offset}]"
        )
    return 0


def _rt_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-a", "--amount", type=int, default=100, help="message amount (100)")
    p.add_argument("-s", "--size", type=int, default=128, help="message size in bytes (128)")
    json_arg(p)


@command("checkMsgSendRT", "check message send response time", _rt_args)
async def check_msg_send_rt(admin: AdminClient, a: argparse.Namespace) -> int:
    """``-a`` sends of ``-s`` bytes, queue after queue of the topic; each result, then the average RT (the first
    send, which also opens the connection, is left out of the average as J does)."""
    from client import Producer

    rows: list[list[object]] = []
    total = 0
    async with Producer("PID_CheckRT", instance=admin.instance) as p:
        queues = await p.publish_queues(a.topic)
        for i in range(a.amount):
            mq = queues[i % len(queues)]
            began = time.monotonic()
            try:
                await p.send(Message(a.topic, b"x" * a.size), queue=mq)
                ok = True
            except (RemotingError, MQClientError):
                ok = False
            rt = int((time.monotonic() - began) * 1000)
            if i > 0:
                total += rt
            rows.append([mq.broker_name, mq.queue_id, ok, rt])
    avg = total / (a.amount - 1) if a.amount > 1 else 0.0
    if a.json:
        print_json({"results": [dict(zip(("brokerName", "QID", "sendResult", "RT"), r, strict=True)) for r in rows],
                    "avgRT": round(avg, 2)})  # fmt: skip
        return 0
    print(f"{'#Broker Name':<32}  {'#QID':<4}  {'#Send Result':<20}    #RT")
    for r in rows:
        print(f"{r[0]!s:<32}  {r[1]!s:<4}  {java(r[2]):<20}    {r[3]}")
    print(f"Avg RT: {avg:.2f}")
    return 0


# -- clusterRT -------------------------------------------------------------------------------------------------------


def _cluster_rt_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-c", "--cluster", help="only this cluster (default: all)")
    p.add_argument("-a", "--amount", type=int, default=100, help="messages per broker (100)")
    p.add_argument("-s", "--size", type=int, default=128, help="message size in bytes (128)")
    p.add_argument("-i", "--interval", type=int, default=0, help="repeat every this many seconds (0 = once)")
    p.add_argument("-p", "--printLog", default="false", help="accepted (J prints to a log file)")
    p.add_argument("-m", "--machineRoom", default="noname", help="accepted (shown by J in its log)")
    json_arg(p)


@command("clusterRT", "List All clusters Message Send RT", _cluster_rt_args)
async def cluster_rt(admin: AdminClient, a: argparse.Namespace) -> int:
    """J: ``-a`` sends of ``-s`` bytes to each master's own topic (named like the broker), then per broker the
    average RT and the success and failure counts."""
    from client import Producer

    args = argparse.Namespace(clusterName=a.cluster, brokerAddr=None, json=a.json)
    async with Producer("PID_SMSC", instance=admin.instance) as p:
        while True:
            rows: list[list[object]] = []
            for cluster, name, _addr in await masters(admin, args):
                ok = failed = 0
                spent = 0.0
                for _ in range(a.amount):
                    began = time.monotonic()
                    try:
                        await p.send(Message(name, b"x" * a.size))
                        ok += 1
                        spent += time.monotonic() - began
                    except (RemotingError, MQClientError):
                        failed += 1
                rt = spent * 1000 / ok if ok else 0.0
                rows.append([cluster, name, f"{rt:.2f}", ok, failed])
            table(args, ["#Cluster Name", "#Broker Name", "#RT", "#successCount", "#failCount"], rows, [26, 26, 8, 15])
            if a.interval <= 0:
                return 0
            await asyncio.sleep(a.interval)  # the operator's period (-i), not synchronisation
