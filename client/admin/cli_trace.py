"""``mqadmin queryMsgTraceById -i msgId [-t traceTopic]``: the message-trace records that clients with tracing on
(the Java client's ``enableMsgTrace``) write to ``RMQ_SYS_TRACE_TOPIC``, found by the index (each trace message has
the traced msgId among its keys), decoded from J's ``TraceDataEncoder`` text (contexts separated by ``\\x02``,
fields by ``\\x01``) and printed as J's tool prints them: one ``Pub`` table, then one ``Sub`` table per consumer
group (``SubAfter`` records). ``--json`` prints the decoded records.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass

from client.admin.admin_client import AdminClient
from client.admin.output import json_arg, print_json
from client.admin.registry import command
from protocol.message_ext import MessageExt
from protocol.trace import DEFAULT_TRACE_TOPIC, TraceType, decode_records

TRACE_TOPIC = DEFAULT_TRACE_TOPIC


@dataclass(frozen=True, slots=True)
class TraceView:
    """J ``TraceView``: one trace record about ``msg_id``."""

    msg_type: str  # Pub, SubBefore, SubAfter, EndTransaction
    msg_id: str
    group_name: str
    client_host: str
    time_stamp: int
    cost_time: int
    status: str  # success / failed


def decode_trace(msg_id: str, trace: MessageExt) -> list[TraceView]:
    """J ``TraceView.decodeFromTraceTransData``: the records of one trace message that are about ``msg_id``."""
    host = f"{trace.born_host[0]}:{trace.born_host[1]}"
    out: list[TraceView] = []
    for r in decode_records(trace.body.decode("utf-8", "replace")):
        if r.msg_id != msg_id or r.type is TraceType.END_TRANSACTION:
            continue
        cost = 0 if r.type is TraceType.SUB_BEFORE else r.cost_time
        out.append(TraceView(r.type.value, r.msg_id, r.group, host, r.timestamp, cost, _status(r.success)))
    return out


def _status(ok: bool) -> str:
    return "success" if ok else "failed"


def _row(cells: list[object]) -> str:
    a, b, c, d, e, f = (str(x) for x in cells)
    return f"{a:<10} {b:<20} {c:<20} {d:<20} {e:<10} {f:<10}".rstrip()


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-i", "--msgId", required=True, help="the traced message's (unique) msgId")
    p.add_argument("-t", "--traceTopic", default=TRACE_TOPIC, help=f"trace topic (default {TRACE_TOPIC})")
    json_arg(p)


@command("queryMsgTraceById", "query a message trace", _args)
async def query_msg_trace_by_id(admin: AdminClient, a: argparse.Namespace) -> int:
    msg_id = a.msgId.strip()
    views = [v for m in await admin.query_by_key(a.traceTopic, msg_id) for v in decode_trace(msg_id, m)]
    views.sort(key=lambda v: v.time_stamp)
    if a.json:
        print_json([asdict(v) for v in views])
        return 0
    for v in views:
        if v.msg_type == "Pub":
            print(_row(["#Type", "#ProducerGroup", "#ClientHost", "#SendTime", "#CostTimes", "#Status"]))
            print(_row(["Pub", v.group_name, v.client_host, _when(v.time_stamp), f"{v.cost_time}ms", v.status]))
            print()
    groups: dict[str, list[TraceView]] = {}
    for v in views:
        if v.msg_type == "SubAfter":
            groups.setdefault(v.group_name, []).append(v)
    for group, subs in groups.items():
        print(_row(["#Type", "#ConsumerGroup", "#ClientHost", "#ConsumerTime", "#CostTimes", "#Status"]))
        for v in subs:
            print(_row(["Sub", group, v.client_host, _when(v.time_stamp), f"{v.cost_time}ms", v.status]))
        print()
    return 0
