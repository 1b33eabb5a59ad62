"""``mqadmin`` commands that find, print, read and probe messages (RocketMQ 4.9 tools' names and option letters;
registered in ``registry.COMMANDS`` on import):

=================== ============================================================ ==================================
command             options                                                      how
=================== ============================================================ ==================================
queryMsgById        -i id[,id…] [-t topic] [-g group -d clientId] [-s resend]    offset id: VIEW_MESSAGE_BY_ID;
                                                                                 unique id: QUERY_MESSAGE (uniq)
queryMsgByUniqueKey -i id -t topic [-a showAll] [-g group -d clientId]           QUERY_MESSAGE with uniqueKeyFlag
queryMsgByOffset    -t topic -b brokerName -i queueId -o offset                  PULL_MESSAGE of one message
printMsg            -t topic [-c charset] [-s subExpr] [-b begin] [-e end] [-d]  every queue, PULL_MESSAGE
printMsgByQueue     -t topic -a brokerName -i queueId [-s] [-b] [-e] [-p] [-d]   one queue; ``-f`` counts per tag
                    [-f calculate]
consumeMessage      -t topic [-b brokerName -i queueId] [-o offset] [-g group]   PULL_MESSAGE (no offset commit)
                    [-s begin] [-e end] [-c count]
sendMsgStatus       -b brokerName [-s size] [-c count]                           SEND_MESSAGE to topic = brokerName
checkMsgSendRT      -t topic [-a amount] [-s size]                               SEND_MESSAGE, one queue after
                                                                                 another
=================== ============================================================ ==================================

Both kinds of message id work wherever an id is taken: J's tool decodes every id as an offset id (the broker's
address and commit-log offset), which a producer's msgId (a unique id) is not; here an id that does not name a known
broker is looked up as a unique key — in ``-t``'s index, or every topic's without it. The message block is J's
(``%-20s``), the body written to ``<tmp>/rocketmq/msgbodys/<msgId>`` as J does, followed by the consumer-group
tracking table (``MessageTrack [consumerGroup=…, trackType=CONSUMED|NOT_CONSUME_YET|NOT_ONLINE|PULL|…]``).
Read commands take ``--json``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from client.admin.admin_client import AdminClient
from client.admin.formatting import direct_result
from client.admin.output import human_ms, java, java_map, json_arg, print_json, table
from client.admin.registry import command
from client.errors import MQClientError
from client.message import Message, MessageQueue
from protocol.bodies import ConsumerConnection, ConsumeType, GroupList
from protocol.codes import RequestCode, ResponseCode
from protocol.errors import BrokerError, RemotingError
from protocol.headers import PULL_FLAG_SUBSCRIPTION, PullMessageRequestHeader
from protocol.message import MessageExt, decode_records

TOOLS_GROUP = "TOOLS_CONSUMER"


def parse_time(s: str) -> int:
    """``now`` | epoch millis | ``yyyy-MM-dd#HH:mm:ss:SSS`` → epoch millis (J's tool formats)."""
    s = s.strip()
    if s == "now":
        return int(time.time() * 1000)
    if s.lstrip("-").isdigit():
        return int(s)
    try:
        t = time.strptime(s[:19], "%Y-%m-%d#%H:%M:%S")
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r}: expected millis or yyyy-MM-dd#HH:mm:ss:SSS") from None
    return int(time.mktime(t) * 1000) + (int(s[20:23]) if len(s) > 20 else 0)


def java_bool(text: str) -> bool:
    low = text.strip().lower()
    if low not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return low == "true"


# -- the message block and tracking table ---------------------------------------------------------------------------


def body_file(msg: MessageExt) -> str:
    """J ``createBodyFile``: the body in ``<tmp>/rocketmq/msgbodys/<msgId>``; the path."""
    d = os.path.join(tempfile.gettempdir(), "rocketmq", "msgbodys")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, msg.msg_id)
    with open(path, "wb") as f:
        f.write(msg.body)
    return path


@dataclass(frozen=True, slots=True)
class MessageTrack:
    consumer_group: str
    track_type: str
    exception_desc: str | None = None

    def __str__(self) -> str:
        return (
            f"MessageTrack [consumerGroup={self.consumer_group}, trackType={self.track_type}, "
            f"exceptionDesc={java(self.exception_desc)}]"
        )


def message_fields(msg: MessageExt, path: str) -> list[tuple[str, Any]]:
    return [
        ("OffsetID:", msg.offset_msg_id),
        ("Topic:", msg.topic),
        ("Tags:", f"[{java(msg.tags)}]"),
        ("Keys:", f"[{java(msg.properties.get('KEYS'))}]"),
        ("Queue ID:", msg.queue_id),
        ("Queue Offset:", msg.queue_offset),
        ("CommitLog Offset:", msg.commit_log_offset),
        ("Reconsume Times:", msg.reconsume_times),
        ("Born Timestamp:", human_ms(msg.born_timestamp)),
        ("Store Timestamp:", human_ms(msg.store_timestamp)),
        ("Born Host:", f"{msg.born_host[0]}:{msg.born_host[1]}"),
        ("Store Host:", f"{msg.store_host[0]}:{msg.store_host[1]}"),
        ("System Flag:", msg.sys_flag),
        ("Properties:", java_map(msg.properties)),
        ("Message Body Path:", path),
    ]


async def message_tracks(admin: AdminClient, msg: MessageExt) -> list[MessageTrack]:
    """J ``messageTrackDetail``: per group consuming the topic, whether that group has consumed the message."""
    groups: set[str] = set()
    for addr in await admin.broker_addrs():
        try:
            resp = await admin.call(addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, {"topic": msg.topic})
        except RemotingError:
            continue
        groups |= set(GroupList.decode(resp.body).group_list)
    tracks = []
    for group in sorted(groups):
        try:
            _addr, conn = await admin.find_consumer_connection(group)
        except BrokerError as exc:
            kind = "NOT_ONLINE" if exc.response_code == ResponseCode.CONSUMER_NOT_ONLINE else "UNKNOWN"
            tracks.append(MessageTrack(group, kind, f"CODE:{exc.response_code} DESC:{exc.remark}"))
            continue
        except (RemotingError, MQClientError) as exc:
            tracks.append(MessageTrack(group, "UNKNOWN", str(exc)))
            continue
        tracks.append(MessageTrack(group, await _track_type(admin, msg, group, conn)))
    return tracks


async def _track_type(admin: AdminClient, msg: MessageExt, group: str, conn: ConsumerConnection) -> str:
    if conn.consume_type == ConsumeType.CONSUME_ACTIVELY:
        return "PULL"
    store = f"{msg.store_host[0]}:{msg.store_host[1]}"
    consumed = False
    for addr in await admin.broker_addrs():
        if addr != store:
            continue
        stats = await admin.consume_stats(addr, group, msg.topic)
        for mq, w in stats.offset_table.items():
            if mq.topic == msg.topic and mq.queue_id == msg.queue_id and w.consumer_offset > msg.queue_offset:
                consumed = True
    if not consumed:
        return "NOT_CONSUME_YET"
    sub = conn.subscription_table.get(msg.topic)
    if sub is not None and sub.tags_set and "*" not in sub.tags_set and msg.tags not in sub.tags_set:
        return "CONSUMED_BUT_FILTERED"
    return "CONSUMED"


async def print_message(admin: AdminClient, msg: MessageExt, as_json: bool = False) -> None:
    path = body_file(msg)
    tracks = await message_tracks(admin, msg)
    if as_json:
        obj = {k.rstrip(":"): v for k, v in message_fields(msg, path)}
        obj["Message Body"] = msg.body.decode("utf-8", "replace")
        obj["MsgId"] = msg.msg_id
        obj["Tracks"] = [{"consumerGroup": t.consumer_group, "trackType": t.track_type} for t in tracks]
        print_json(obj)
        return
    for k, v in message_fields(msg, path):
        print(f"{k:<20} {v}")
    if not tracks:
        print("\n\nWARN: No Consumer")
    else:
        print("\n")
        for t in tracks:
            print(t)


async def _find(admin: AdminClient, msg_id: str, topic: str | None) -> MessageExt:
    msg = await admin.find_message(msg_id, topic)
    if msg is None:
        where = f" in topic {topic}" if topic else ""
        raise MQClientError(f"Message not found: {msg_id}{where}")
    return msg


async def _consume_directly(admin: AdminClient, msg: MessageExt, group: str, client_id: str) -> None:
    print(direct_result(await admin.consume_message_directly(msg.offset_msg_id, group, client_id)))


async def _resend(admin: AdminClient, msg: MessageExt) -> None:
    from client import Producer

    props = {k: v for k, v in msg.properties.items() if k not in ("UNIQ_KEY", "MIN_OFFSET", "MAX_OFFSET")}
    async with Producer("ReSendMsgById", instance=admin.instance) as p:
        r = await p.send(Message(msg.topic, msg.body, properties=props))
    print(f"prepare resend msg. originalMsgId={msg.msg_id}")
    print(f"SendResult [sendStatus={r.send_status.name}, msgId={r.msg_id}, offsetMsgId={r.offset_msg_id}, "
          f"messageQueue={r.message_queue}, queueOffset={r.queue_offset}]")  # fmt: skip


# -- queryMsgById, queryMsgByUniqueKey -------------------------------------------------------------------------------


def _query_id_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-i", "--msgId", required=True, help="msgId(s), offset or unique ids, comma-separated")
    p.add_argument("-t", "--topic", help="the topic of a unique id (default: search every topic)")
    p.add_argument("-g", "--consumerGroup", help="with -d: consume the message directly on that client")
    p.add_argument("-d", "--clientId", help="the consumer's client id (with -g)")
    p.add_argument("-s", "--sendMessage", type=java_bool, default=False, help="resend the message (true/false)")
    p.add_argument("-u", "--unitName", help="unit name (accepted, no effect)")
    json_arg(p)


@command("queryMsgById", "Query Message by Id", _query_id_args)
async def query_msg_by_id(admin: AdminClient, a: argparse.Namespace) -> int:
    """Each message; with -g and -d also J's ``pushMsg`` (CONSUME_MESSAGE_DIRECTLY to that client, its
    ConsumeMessageDirectlyResult printed); with ``-s true`` the message is sent again to its topic."""
    for mid in filter(None, (m.strip() for m in a.msgId.split(","))):
        msg = await _find(admin, mid, a.topic)
        await print_message(admin, msg, a.json)
        if a.consumerGroup and a.clientId:
            await _consume_directly(admin, msg, a.consumerGroup, a.clientId)
        elif a.sendMessage:
            await _resend(admin, msg)
    return 0


def _query_uniq_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-i", "--msgId", required=True, help="the unique (client) message id")
    p.add_argument("-t", "--topic", required=True, help="The topic of msg")
    p.add_argument("-g", "--consumerGroup", help="with -d: consume the message directly on that client")
    p.add_argument("-d", "--clientId", help="the consumer's client id (with -g)")
    p.add_argument("-a", "--showAll", action="store_true", help="Print all message, the limit is 32")
    json_arg(p)


@command("queryMsgByUniqueKey", "Query Message by Unique key", _query_uniq_args)
async def query_msg_by_unique_key(admin: AdminClient, a: argparse.Namespace) -> int:
    if a.showAll:
        found = await admin.query_by_unique_key(a.topic, a.msgId.strip())
        if not found:
            raise MQClientError(f"Message not found: {a.msgId} in topic {a.topic}")
        for msg in found:
            await print_message(admin, msg, a.json)
        return 0
    msg = await _find(admin, a.msgId.strip(), a.topic)
    await print_message(admin, msg, a.json)
    if a.consumerGroup and a.clientId:
        await _consume_directly(admin, msg, a.consumerGroup, a.clientId)
    return 0


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


def _offset_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-b", "--brokerName", required=True)
    p.add_argument("-i", "--queueId", type=int, required=True)
    p.add_argument("-o", "--offset", type=int, required=True)
    json_arg(p)


@command("queryMsgByOffset", "Query Message by offset", _offset_args)
async def query_msg_by_offset(admin: AdminClient, a: argparse.Namespace) -> int:
    mq = MessageQueue(a.topic, a.brokerName, a.queueId)
    await admin.instance.get_route(a.topic, refresh=True)
    msgs, _ = await pull_range(admin, mq, a.offset, a.offset + 1)
    if not msgs:
        raise MQClientError(f"no message at offset {a.offset} of {mq}")
    await print_message(admin, msgs[0], a.json)
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


# -- probes ----------------------------------------------------------------------------------------------------------


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


__all__ = ["TOOLS_GROUP", "parse_time", "print_message", "pull_range", "table"]
