"""What a scenario compares: the events a driver reported, normalised so that what legitimately differs between two
clusters (message ids, hosts, timestamps, which queue a round-robin producer started on) drops out, and the
documented differences (docs/reference-differences.md) are asserted where they show rather than hidden.

    views = {t.name: sorted(message_view(e, t.name) for e in events) for ...}
    assert_same(views)
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from typing import Any

# Properties whose value is per run (ids, clocks, queue extents): their presence is compared, not their value.
VOLATILE = frozenset(
    {
        "UNIQ_KEY",
        "CONSUME_START_TIME",
        "MIN_OFFSET",
        "MAX_OFFSET",
        "ORIGIN_MESSAGE_ID",
        "TRAN_PREPARED_QUEUE_OFFSET",
        "__transactionId__",
        "REAL_QID",
        "POP_CK",
        "TIMER_OUT_MS",
        "TIMER_DELIVER_MS",
    }
)
# docs/reference-differences.md: properties one side's broker stamps on stored messages and the other does not.
# Both add the cluster, region and trace switch (CLUSTER, MSG_REGION, TRACE_ON) to every message of a single (not
# batch) send, compared like any property; rocketq also seals every record with a whole-record CRC property (README
# "Whole-record CRC").
BROKER_STAMPED = {"apache": frozenset[str](), "rocketq": frozenset({"__CRC32#"})}


def props_view(props: dict[str, str], target: str) -> tuple[tuple[str, str], ...]:
    """The properties without the other side's documented stamps; volatile values as "*"."""
    other = BROKER_STAMPED["rocketq" if target == "apache" else "apache"]
    leaked = other & props.keys()
    assert not leaked, f"{target} set {sorted(leaked)}, documented as only the other side's"
    out = {k: ("*" if k in VOLATILE else v) for k, v in props.items() if k not in BROKER_STAMPED[target]}
    return tuple(sorted(out.items()))


def stamped(events: Iterable[dict[str, Any]], target: str) -> set[str]:
    """Which of ``target``'s documented broker stamps its messages carried (the difference, asserted)."""
    return {k for e in events if e["event"] == "msg" for k in e["props"] if k in BROKER_STAMPED[target]}


def message_view(e: dict[str, Any], target: str, *, queue: bool = False) -> tuple[Any, ...]:
    """A received message as both sides should report it (``queue``: with its queue id and offset, for scenarios
    whose producer picks queues deterministically)."""
    base = (e["topic"], e.get("tags"), e.get("keys"), e["body"], e["reconsumeTimes"], props_view(e["props"], target))
    return (e["queueId"], e["queueOffset"], *base) if queue else base


def messages(events: Iterable[dict[str, Any]], target: str, *, queue: bool = False) -> list[tuple[Any, ...]]:
    return sorted(message_view(e, target, queue=queue) for e in events if e["event"] == "msg")


def sent_view(events: Iterable[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Send results without the queue a round-robin producer happened to start on."""
    return sorted((e["status"], e["hasMsgId"], e["hasOffsetMsgId"]) for e in events if e["event"] == "sent")


def errors(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] in ("error", "timeout")]


def _lines(view: Any, path: str = "") -> list[str]:
    """One line per leaf list item or scalar, prefixed with its path, so a diff shows only what differs."""
    if isinstance(view, dict):
        return [ln for k in sorted(view, key=str) for ln in _lines(view[k], f"{path}.{k}")]
    if isinstance(view, list):
        return [f"{path}[{i}] {json.dumps(v, default=str, sort_keys=True)}" for i, v in enumerate(view)] or [
            f"{path} []"
        ]
    return [f"{path} {json.dumps(view, default=str, sort_keys=True)}"]


def assert_same(views: dict[str, Any]) -> None:
    """Every target saw the same; on failure the lines that differ are shown as a unified diff."""
    first, *rest = views
    for name in rest:
        if views[name] != views[first]:
            diff = difflib.unified_diff(_lines(views[first]), _lines(views[name]), first, name, lineterm="", n=0)
            raise AssertionError(f"{name} differs from {first}:\n" + "\n".join(diff))
