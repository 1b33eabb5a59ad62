"""``mqadmin`` commands that read a topic's messages without committing anything (RocketMQ 4.9 tools' names and
option letters; registered in ``registry.COMMANDS`` on import):

=============== ============================================================== ====================================
command         options                                                        how
=============== ============================================================== ====================================
printMsg        -t topic [-c charset] [-s subExpr] [-b begin] [-e end] [-d]    every queue, PULL_MESSAGE
printMsgByQueue -t topic -a brokerName -i queueId [-s] [-b] [-e] [-p] [-d]     one queue; ``-f`` counts per tag
                [-f calculate]
consumeMessage  -t topic [-b brokerName -i queueId] [-o offset] [-g group]     PULL_MESSAGE, at most ``-c`` messages
                [-s begin] [-e end] [-c count]
=============== ============================================================== ====================================

Times are epoch millis or ``yyyy-MM-dd#HH:mm:ss:SSS`` (SEARCH_OFFSET_BY_TIMESTAMP gives the offsets). Each message
prints as J's ``MSGID: <id> <MessageExt> BODY: <body>`` line; ``--json`` prints the messages as objects.
"""

from __future__ import annotations

import argparse
from typing import Any

from client.admin.admin_client import AdminClient
from client.admin.argtypes import java_bool, parse_time
from client.admin.output import java_map, json_arg, print_json
from client.admin.registry import command
from client.errors import MQClientError
from client.message import MessageQueue
from protocol.codes import ResponseCode
from protocol.headers import PULL_FLAG_SUBSCRIPTION, PullMessageRequestHeader
from protocol.message_ext import MessageExt
from protocol.record_decode import decode_records

TOOLS_GROUP = "TOOLS_CONSUMER"


# -- reading queues --------------------------------------------------------------------------------------------------


def _tags(sub: str | None) -> set[str] | None:
    if not sub or sub.strip() == "*":
        return None
    return {t.strip() for t in sub.split("||") if t.strip()}


async def pull_range(
    admin: AdminClient,
    mq: MessageQueue,
    start: int,
    end: int,
    sub: str | None = None,
    group: str = TOOLS_GROUP,
) -> tuple[list[MessageExt], int]:
    """Messages of ``mq`` from queue offset ``start`` up to (not including) ``end``, filtered by ``sub``'s tags;
    and the offset where reading stopped. Nothing is committed."""
    addr = await admin.instance.find_broker_addr(mq)
    tags = _tags(sub)
    out: list[MessageExt] = []
    offset = start
    while offset < end:
        h = PullMessageRequestHeader(
            group, mq.topic, mq.queue_id, offset, min(32, end - offset), PULL_FLAG_SUBSCRIPTION, 0, 0, 0,
            sub or "*", "TAG",
        )  # fmt: skip
        code, rh, body = await admin.instance.api.pull(addr, h, admin.timeout)
        if code != ResponseCode.SUCCESS or rh.next_begin_offset <= offset:
            break
        for m in decode_records(body, decompress=True):
            if m.queue_offset < end and (tags is None or m.tags in tags):
                out.append(m)
        offset = rh.next_begin_offset
    return out, offset


async def _queue_bounds(admin: AdminClient, mq: MessageQueue) -> tuple[int, int]:
    addr = await admin.instance.find_broker_addr(mq)
    api = admin.instance.api
    return await api.get_min_offset(addr, mq), await api.get_max_offset(addr, mq)


async def _offset_at(admin: AdminClient, mq: MessageQueue, ts: int | None, default: int) -> int:
    if ts is None:
        return default
    return await admin.instance.api.search_offset(await admin.instance.find_broker_addr(mq), mq, ts)


async def _topic_queues(admin: AdminClient, topic: str, broker: str | None = None) -> list[MessageQueue]:
    await admin.instance.get_route(topic, refresh=True)
    route, _raw = await admin.topic_route(topic)
    queues = route.subscribe_queues()
    if broker:
        queues = [q for q in queues if q.broker_name == broker]
    return sorted(queues)


def _msg_line(msg: MessageExt, charset: str, print_body: bool) -> str:
    body = msg.body.decode(charset, "replace") if print_body else "NOT PRINT BODY"
    return f"MSGID: {msg.msg_id} {_msg_repr(msg)} BODY: {body}"


def _msg_repr(m: MessageExt) -> str:
    """J ``MessageExt.toString()`` (the fields operators grep for)."""
    return (
        f"MessageExt [brokerName=null, queueId={m.queue_id}, storeSize={m.store_size}, queueOffset={m.queue_offset}, "
        f"sysFlag={m.sys_flag}, bornTimestamp={m.born_timestamp}, bornHost=/{m.born_host[0]}:{m.born_host[1]}, "
        f"storeTimestamp={m.store_timestamp}, storeHost=/{m.store_host[0]}:{m.store_host[1]}, msgId={m.msg_id}, "
        f"commitLogOffset={m.commit_log_offset}, bodyCRC={m.body_crc}, reconsumeTimes={m.reconsume_times}, "
        f"preparedTransactionOffset={m.prepared_transaction_offset}, toString()=Message{{topic='{m.topic}', "
        f"flag={m.flag}, properties={java_map(m.properties)}, body=[...], transactionId='null'}}]"
    )


def _msg_json(m: MessageExt, charset: str = "utf-8", print_body: bool = True) -> dict[str, Any]:
    return {
        "msgId": m.msg_id,
        "offsetMsgId": m.offset_msg_id,
        "topic": m.topic,
        "queueId": m.queue_id,
        "queueOffset": m.queue_offset,
        "tags": m.tags,
        "keys": m.properties.get("KEYS"),
        "storeTimestamp": m.store_timestamp,
        "bornTimestamp": m.born_timestamp,
        "properties": m.properties,
        "body": m.body.decode(charset, "replace") if print_body else None,
    }


def _print_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-c", "--charsetName", default="utf-8", help="body charset (UTF-8, GBK…)")
    p.add_argument("-s", "--subExpression", default="*", help="e.g. TagA || TagB")
    p.add_argument("-b", "--beginTimestamp", type=parse_time, help="millis or yyyy-MM-dd#HH:mm:ss:SSS")
    p.add_argument("-e", "--endTimestamp", type=parse_time, help="millis or yyyy-MM-dd#HH:mm:ss:SSS")
    p.add_argument("-d", "--printBody", type=java_bool, default=True, help="print body (true/false)")
    json_arg(p)


@command("printMsg", "Print Message Detail", _print_args)
async def print_msg(admin: AdminClient, a: argparse.Namespace) -> int:
    found: list[dict[str, Any]] = []
    for mq in await _topic_queues(admin, a.topic):
        lo, hi = await _queue_bounds(admin, mq)
        start = await _offset_at(admin, mq, a.beginTimestamp, lo)
        end = await _offset_at(admin, mq, a.endTimestamp, hi)
        msgs, stopped = await pull_range(admin, mq, start, end, a.subExpression)
        if a.json:
            found.extend(_msg_json(m, a.charsetName, a.printBody) for m in msgs)
            continue
        print(f"minOffset={start}, maxOffset={end}, {mq}")
        for m in msgs:
            print(_msg_line(m, a.charsetName, a.printBody))
        if not msgs:
            print(f"{mq} no matched msg. status=NO_MATCHED_MSG, offset={stopped}")
        else:
            print(f"{mq} print msg finished. status=FOUND, offset={stopped}")
        print("--------------------------------------------------------")
    if a.json:
        print_json(found)
    return 0


def _print_queue_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-a", "--brokerName", required=True)
    p.add_argument("-i", "--queueId", type=int, required=True)
    p.add_argument("-c", "--charsetName", default="utf-8")
    p.add_argument("-s", "--subExpression", default="*")
    p.add_argument("-b", "--beginTimestamp", type=parse_time)
    p.add_argument("-e", "--endTimestamp", type=parse_time)
    p.add_argument("-p", "--printMsg", type=java_bool, default=False, help="print msg (true/false)")
    p.add_argument("-d", "--printBody", type=java_bool, default=False, help="print body (true/false)")
    p.add_argument("-f", "--calculate", type=java_bool, default=False, help="count by tag (true/false)")
    json_arg(p)


@command("printMsgByQueue", "Print Message Detail", _print_queue_args)
async def print_msg_by_queue(admin: AdminClient, a: argparse.Namespace) -> int:
    mq = MessageQueue(a.topic, a.brokerName, a.queueId)
    await admin.instance.get_route(a.topic, refresh=True)
    lo, hi = await _queue_bounds(admin, mq)
    start = await _offset_at(admin, mq, a.beginTimestamp, lo)
    end = await _offset_at(admin, mq, a.endTimestamp, hi)
    msgs, _stopped = await pull_range(admin, mq, start, end, a.subExpression)
    counts: dict[str, int] = {}
    for m in msgs:
        tag = m.tags or ""
        counts[tag] = counts.get(tag, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if a.json:
        print_json(
            {
                "messages": [_msg_json(m, a.charsetName, a.printBody) for m in msgs] if a.printMsg else [],
                "tagCounts": [{"tag": t, "count": n} for t, n in ranked] if a.calculate else [],
            }
        )
        return 0
    if a.printMsg:
        for m in msgs:
            print(_msg_line(m, a.charsetName, a.printBody))
    if a.calculate:
        for tag, n in ranked:
            print(f"Tag: {tag:<30} Count: {n}")
    return 0


def _consume_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-b", "--brokerName")
    p.add_argument("-i", "--queueId", type=int)
    p.add_argument("-o", "--offset", type=int, help="queue offset to start at (with -b and -i)")
    p.add_argument("-g", "--consumerGroup", default=TOOLS_GROUP)
    p.add_argument("-s", "--beginTimestamp", type=parse_time)
    p.add_argument("-e", "--endTimestamp", type=parse_time)
    p.add_argument("-c", "--MessageNumber", type=int, default=128, help="how many messages (128)")
    json_arg(p)


@command("consumeMessage", "Consume message", _consume_args)
async def consume_message(admin: AdminClient, a: argparse.Namespace) -> int:
    """Reads (pulls) messages without committing anything: ``-b -i [-o]`` one queue, else every queue of the topic,
    oldest first, at most ``-c`` in all."""
    if (a.brokerName is None) != (a.queueId is None):
        raise MQClientError("-b brokerName and -i queueId go together")
    queues = (
        [MessageQueue(a.topic, a.brokerName, a.queueId)]
        if a.brokerName is not None
        else await _topic_queues(admin, a.topic)
    )
    await admin.instance.get_route(a.topic, refresh=True)
    left = a.MessageNumber
    got: list[MessageExt] = []
    for mq in queues:
        if left <= 0:
            break
        lo, hi = await _queue_bounds(admin, mq)
        start = a.offset if a.offset is not None and a.brokerName is not None else lo
        start = await _offset_at(admin, mq, a.beginTimestamp, start)
        end = await _offset_at(admin, mq, a.endTimestamp, hi)
        msgs, stopped = await pull_range(admin, mq, start, min(end, start + left), None, a.consumerGroup)
        left -= len(msgs)
        got.extend(msgs)
        if not a.json:
            for m in msgs:
                print(_msg_line(m, "utf-8", True))
            status = "FOUND" if msgs else "NO_NEW_MSG"
            print(f"{mq} print msg finished. status={status}, offset={stopped}")
    if a.json:
        print_json([_msg_json(m) for m in got])
    return 0
