"""``mqadmin`` commands that find one message and print it (RocketMQ 4.9 tools' names and option letters;
registered in ``registry.COMMANDS`` on import; ``cli_read`` reads whole topics, ``cli_probes`` sends test messages):

=================== ============================================================ ==================================
command             options                                                      how
=================== ============================================================ ==================================
queryMsgById        -i id[,id…] [-t topic] [-g group -d clientId] [-s resend]    offset id: VIEW_MESSAGE_BY_ID;
                                                                                 unique id: QUERY_MESSAGE (uniq)
queryMsgByUniqueKey -i id -t topic [-a showAll] [-g group -d clientId]           QUERY_MESSAGE with uniqueKeyFlag
queryMsgByOffset    -t topic -b brokerName -i queueId -o offset                  PULL_MESSAGE of one message
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
from dataclasses import dataclass
from typing import Any

from client.admin.admin_client import AdminClient
from client.admin.argtypes import java_bool
from client.admin.cli_read import pull_range
from client.admin.formatting import direct_result
from client.admin.output import human_ms, java, java_map, json_arg, print_json
from client.admin.registry import command
from client.errors import MQClientError
from client.message import Message, MessageQueue
from protocol.bodies import ConsumerConnection, ConsumeType, GroupList
from protocol.codes import RequestCode, ResponseCode
from protocol.errors import BrokerError, RemotingError
from protocol.message_ext import MessageExt

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
