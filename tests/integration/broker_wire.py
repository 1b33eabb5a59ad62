"""Raw-frame helpers for broker integration tests: the requests an official client sends, built field by field as
docs/reference/protocol.md §b names them (long names for SEND_MESSAGE, one-letter names for V2), so the tests check the
wire independently of ``protocol.headers``. Pull bodies are decoded with ``protocol.record_decode``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from protocol.codes import RequestCode
from protocol.command import RemotingCommand
from protocol.record_decode import decode_records
from protocol.remoting import RemotingClient

PULL_SUSPEND = 0x2
PULL_SUBSCRIPTION = 0x4
PULL_COMMIT = 0x1


def props_string(props: dict[str, str]) -> str:
    return "".join(f"{k}\x01{v}\x02" for k, v in props.items())


def send_cmd(
    topic: str,
    body: bytes,
    *,
    tags: str | None = None,
    keys: str | None = None,
    props: dict[str, str] | None = None,
    queue_id: int = 0,
    v2: bool = False,
    group: str = "PID_test",
    queue_nums: int = 4,
    sys_flag: int = 0,
) -> RemotingCommand:
    p: dict[str, str] = {}
    if tags:
        p["TAGS"] = tags
    if keys:
        p["KEYS"] = keys
    p["WAIT"] = "true"
    p.update(props or {})
    long = {
        "producerGroup": group,
        "topic": topic,
        "defaultTopic": "TBW102",
        "defaultTopicQueueNums": str(queue_nums),
        "queueId": str(queue_id),
        "sysFlag": str(sys_flag),
        "bornTimestamp": str(int(time.time() * 1000)),
        "flag": "0",
        "properties": props_string(p),
        "reconsumeTimes": "0",
        "unitMode": "false",
        "batch": "false",
    }
    if not v2:
        return RemotingCommand.request(RequestCode.SEND_MESSAGE, long, body)
    short = dict(zip("abcdefghijkm", long.values(), strict=True))
    return RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, short, body)


def batch_body(messages: list[tuple[bytes, dict[str, str]]]) -> bytes:
    """MessageDecoder.encodeMessages: per record totalSize, magic 0, crc 0, flag, bodyLen+body, propsLen+props."""
    import struct

    out = b""
    for body, props in messages:
        pb = props_string(props).encode()
        size = 4 + 4 + 4 + 4 + 4 + len(body) + 2 + len(pb)
        out += struct.pack(">iiiii", size, 0, 0, 0, len(body)) + body + struct.pack(">h", len(pb)) + pb
    return out


def pull_cmd(
    group: str,
    topic: str,
    queue_id: int,
    offset: int,
    *,
    sub: str = "*",
    sys_flag: int = PULL_SUBSCRIPTION,
    suspend_ms: int = 15000,
    max_msgs: int = 32,
    commit_offset: int = -1,
) -> RemotingCommand:
    ext = {
        "consumerGroup": group,
        "topic": topic,
        "queueId": str(queue_id),
        "queueOffset": str(offset),
        "maxMsgNums": str(max_msgs),
        "sysFlag": str(sys_flag),
        "commitOffset": str(commit_offset),
        "suspendTimeoutMillis": str(suspend_ms),
        "subscription": sub,
        "subVersion": "0",
    }
    return RemotingCommand.request(RequestCode.PULL_MESSAGE, ext)


def heartbeat_cmd(client_id: str, group: str, topic: str, sub: str = "*") -> RemotingCommand:
    """A C++-style heartbeat: enum ordinals, subVersion as a string, codeSet [0,0], trailing newline."""
    tags = [t.strip() for t in sub.split("||")] if sub not in ("*", "") else []
    subs: list[dict[str, Any]] = [
        {"subString": "*", "subVersion": "1", "topic": f"%RETRY%{group}"},
        {"codeSet": [0, 0], "subString": sub, "subVersion": "1", "tagsSet": tags, "topic": topic},
    ]
    data = {
        "clientID": client_id,
        "consumerDataSet": [
            {
                "consumeFromWhere": 0,
                "consumeType": 1,
                "groupName": group,
                "messageModel": 1,
                "subscriptionDataSet": subs,
            }
        ],
    }
    return RemotingCommand.request(RequestCode.HEART_BEAT, {}, (json.dumps(data) + "\n").encode())


def simple_cmd(code: int, **ext: object) -> RemotingCommand:
    return RemotingCommand.request(code, {k: str(v) for k, v in ext.items()})


async def send(client: RemotingClient, addr: str, topic: str, body: bytes, **kw: Any) -> RemotingCommand:
    return await client.invoke(addr, send_cmd(topic, body, **kw), 5.0)


async def pull(
    client: RemotingClient, addr: str, group: str, topic: str, qid: int, offset: int, *, timeout: float = 5.0, **kw: Any
) -> RemotingCommand:
    return await client.invoke(addr, pull_cmd(group, topic, qid, offset, **kw), timeout)


def messages(resp: RemotingCommand) -> list[Any]:
    return decode_records(resp.body)
