"""Output shapes of ``mqadmin``: plain-text tables whose header cells start with ``#`` (scripts ``awk`` them), the
``%-50s=  %s`` config listing, and the text forms of J's ``toString`` where RocketMQ's
tool prints an object (ConsumeMessageDirectlyResult, ConsumeQueueData, ConsumerRunningInfo.formatString).

Every function returns or prints text only; the commands (``cli``, ``cli_ops``) fetch the data.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from client.admin.admin_client import RunningInfo
from client.message import MessageQueue
from protocol.bodies import Connection, ConsumeMessageDirectlyResult, ConsumeQueueData, SubscriptionData

SEPARATOR = "======================================"


def fmt_time(ms: int, empty: str = "N/A") -> str:
    """A millisecond timestamp as local ``yyyy-MM-dd HH:mm:ss``; ``empty`` for 0 (never stored / consumed)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000)) if ms > 0 else empty


def row(widths: Sequence[int], cells: Sequence[object]) -> str:
    """``cells`` left-aligned in ``widths``; cells beyond the widths (the last column) follow unpadded."""
    padded = "".join(f"{c!s:<{w}}" for c, w in zip(cells, widths, strict=False))
    return padded + " ".join(str(c) for c in cells[len(widths) :])


def _java(value: object) -> str:
    """A field as J's string concatenation prints it (``true``/``false``, ``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- consume progress (consumerProgress, brokerConsumeStats) ---------------------------------------------------------

_OFFSET_WIDTHS = (40, 24, 6, 16, 18, 10)
_GROUP_WIDTH = 32


def offset_header(*, group: bool = False) -> str:
    cells = ["#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Diff", "#LastTime"]
    widths = list(_OFFSET_WIDTHS)
    if group:
        cells.insert(1, "#Group")
        widths.insert(1, _GROUP_WIDTH)
    return row(widths, cells)


def offset_row(mq: Any, broker_offset: int, consumer_offset: int, last_timestamp: int, group: str | None = None) -> str:
    """One queue of a consume-progress table; ``mq`` is any MessageQueue (topic, broker_name, queue_id)."""
    cells: list[object] = [
        mq.topic,
        mq.broker_name,
        mq.queue_id,
        broker_offset,
        consumer_offset,
        broker_offset - consumer_offset,
        fmt_time(last_timestamp),
    ]
    widths = list(_OFFSET_WIDTHS)
    if group is not None:
        cells.insert(1, group)
        widths.insert(1, _GROUP_WIDTH)
    return row(widths, cells)


# -- connections, config ---------------------------------------------------------------------------------------------


def print_connections(conns: Iterable[Connection]) -> None:
    """``#ClientId #ClientAddr #Language #Version`` (consumerConnection, producerConnection)."""
    widths = (48, 24, 12)
    print(row(widths, ["#ClientId", "#ClientAddr", "#Language", "#Version"]))
    for c in sorted(conns, key=lambda c: c.client_id):
        print(row(widths, [c.client_id, c.client_addr, c.language, c.version]))


def print_config(addr: str, props: Mapping[str, str]) -> None:
    """J's getBrokerConfig / getNamesrvConfig block: a ``====addr====`` banner, then ``%-50s=  %s`` per key."""
    print(f"============{addr}============")
    for k, v in props.items():
        print(f"{k:<50}=  {v}")


# -- messages --------------------------------------------------------------------------------------------------------


def direct_result(r: ConsumeMessageDirectlyResult) -> str:
    """J ``ConsumeMessageDirectlyResult.toString()``."""
    return (
        f"ConsumeMessageDirectlyResult [order={_java(r.order)}, autoCommit={_java(r.auto_commit)}, "
        f"consumeResult={_java(r.consume_result and r.consume_result.value)}, remark={_java(r.remark)}, "
        f"spentTimeMills={r.spent_time_mills}]"
    )


# -- consume queue units (queryCq) -----------------------------------------------------------------------------------


def subscription_json(sub: SubscriptionData) -> str:
    """fastjson's pretty form (``JSON.toJSONString(sub, true)``): tab-indented, keys in alphabetical order."""
    return json.dumps(sub.to_json(), indent="\t", sort_keys=True, ensure_ascii=False)


def consume_queue_unit(u: ConsumeQueueData) -> str:
    """J ``ConsumeQueueData.toString()``."""
    return (
        f"ConsumeQueueData{{physicOffset={u.physic_offset}, physicSize={u.physic_size}, tagsCode={u.tags_code}, "
        f"extendDataJson='{_java(u.extend_data_json)}', bitMap='{_java(u.bit_map)}', eval={_java(u.eval)}, "
        f"msg='{_java(u.msg)}'}}"
    )


# -- consumer running info (consumerStatus) --------------------------------------------------------------------------


# J ProcessQueueInfo.toString() order (the wire body has them alphabetically)
_PQ_FIELDS = (
    "commitOffset",
    "cachedMsgMinOffset",
    "cachedMsgMaxOffset",
    "cachedMsgCount",
    "cachedMsgSizeInMiB",
    "transactionMsgMinOffset",
    "transactionMsgMaxOffset",
    "transactionMsgCount",
    "locked",
    "tryUnlockTimes",
    "lastLockTimestamp",
    "droped",
    "lastPullTimestamp",
    "lastConsumeTimestamp",
)


def _pq_info(pq: Mapping[str, Any]) -> str:
    keys = [k for k in _PQ_FIELDS if k in pq] + [k for k in pq if k not in _PQ_FIELDS]
    return "ProcessQueueInfo [" + ", ".join(f"{k}={_java(pq[k])}" for k in keys) + "]"


def _queue_cells(mq: MessageQueue) -> list[object]:
    return [mq.topic, mq.broker_name, mq.queue_id]


def print_running_info(info: RunningInfo) -> None:
    """J ``ConsumerRunningInfo.formatString()``: properties, subscriptions, per-queue committed offsets and process
    queues, then the consume statistics (J's per-topic RT/TPS table, or this SDK's counters) and any jstack."""
    print("#Consumer Properties#")
    for k, v in sorted(info.properties.items()):
        print(f"{k:<40}: {v}")
    print("\n\n#Consumer Subscription#")
    for i, sub in enumerate(info.subscriptions, 1):
        print(
            f"{i:03d} Topic: {sub.topic:<40} ClassFilter: {_java(sub.class_filter_mode):<8} SubExpression: {sub.sub_string}"
        )
    widths = (66, 34, 6)
    print("\n\n#Consumer Offset#")
    print(row(widths, ["#Topic", "#Broker Name", "#QID", "#Consumer Offset"]))
    for mq, pq in info.mq_table.items():
        print(row(widths, [*_queue_cells(mq), pq.get("commitOffset", "")]))
    print("\n\n#Consumer MQ Detail#")
    print(row(widths, ["#Topic", "#Broker Name", "#QID", "#ProcessQueueInfo"]))
    for mq, pq in info.mq_table.items():
        print(row(widths, [*_queue_cells(mq), _pq_info(pq)]))
    _print_status_table(info.status_table)
    if info.jstack is not None:
        print("\n\n#Consumer jstack#")
        print(info.jstack)


_RT_TPS = ("pullRT", "pullTPS", "consumeRT", "consumeOKTPS", "consumeFailedTPS")


def _print_status_table(table: Mapping[str, Any]) -> None:
    if table and all(isinstance(v, Mapping) for v in table.values()):  # J: topic → ConsumeStatus
        print("\n\n#Consumer RT&TPS#")
        heads = ["#Pull RT", "#Pull TPS", "#Consume RT", "#ConsumeOK TPS", "#ConsumeFailed TPS"]
        print(f"{'#Topic':<64}  " + " ".join(f"{h:>14}" for h in heads) + f" {'#ConsumeFailedMsgsInHour':>25}")
        for topic, st in sorted(table.items()):
            rates = " ".join(f"{float(st.get(k, 0)):>14.2f}" for k in _RT_TPS)
            print(f"{topic:<64}  {rates} {int(st.get('consumeFailedMsgs', 0)):>25}")
        return
    print("\n\n#Consumer Stats#")
    for k, v in table.items():
        print(f"{k:<40}: {v}")
