"""Pure offset arithmetic for the ``rocketmq`` Spark source: queue keys, the canonical offset JSON, parsing.

A Spark offset of this source is a nested dict ``{topic: {brokerName: {queueId: nextOffset}}}``: every key a string,
every value the *exclusive* next queue offset to read. The same shape (``endOffset`` from query progress) can be pasted
into ``startingOffsets``. Spark compares offsets by their JSON text and its runner does ``json.dumps(offset)`` without
``sort_keys``, so every offset this package hands to Spark is built by :func:`to_json_dict`, whose keys are sorted at
every level (``json.dumps(d) == json.dumps(d, sort_keys=True)``). Queue ids therefore sort as strings ("10" < "2").

In user-supplied JSON (``startingOffsets``, ``endingOffsets``) two sentinels are allowed, as in Spark's Kafka source:
``-2`` = earliest, ``-1`` = latest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

EARLIEST = -2
LATEST = -1

JsonOffsets = dict[str, dict[str, dict[str, int]]]


class QueueKey(NamedTuple):
    """One message queue: RocketMQ's ``MessageQueue(topic, brokerName, queueId)``."""

    topic: str
    broker: str
    queue_id: int

    def __str__(self) -> str:
        return f"{self.topic}/{self.broker}/{self.queue_id}"


OffsetMap = dict[QueueKey, int]


class OffsetFormatError(ValueError):
    """Offset JSON that does not have the ``{topic: {brokerName: {queueId: offset}}}`` shape or allowed values."""


def to_json_dict(offsets: Mapping[QueueKey, int]) -> JsonOffsets:
    """The canonical nested form of ``offsets``: string keys sorted at every level, so the JSON text is stable."""
    nested: dict[str, dict[str, dict[str, int]]] = {}
    for key in offsets:
        nested.setdefault(key.topic, {}).setdefault(key.broker, {})[str(key.queue_id)] = int(offsets[key])
    return {
        topic: {broker: dict(sorted(queues.items())) for broker, queues in sorted(brokers.items())}
        for topic, brokers in sorted(nested.items())
    }


def dumps(offsets: Mapping[QueueKey, int]) -> str:
    """Canonical JSON text of ``offsets`` (compact, sorted keys)."""
    return json.dumps(to_json_dict(offsets), separators=(",", ":"))


def from_json_dict(data: Any, *, what: str = "offset", min_value: int = 0) -> OffsetMap:
    """Flatten a nested offset dict (from Spark or from user JSON) into ``{QueueKey: offset}``.

    Values below ``min_value`` are rejected (pass ``EARLIEST`` to allow both sentinels). ``what`` names the source of
    the data in error messages (an option name, or "checkpoint offset").
    """
    if not isinstance(data, Mapping):
        raise OffsetFormatError(f"{what}: expected a JSON object {{topic: {{brokerName: {{queueId: offset}}}}}}")
    out: OffsetMap = {}
    for topic, brokers in data.items():
        if not isinstance(topic, str) or not topic:
            raise OffsetFormatError(f"{what}: topic names must be non-empty strings, got {topic!r}")
        if not isinstance(brokers, Mapping):
            raise OffsetFormatError(f"{what}: topic {topic!r} must map broker names to {{queueId: offset}} objects")
        for broker, queues in brokers.items():
            if not isinstance(broker, str) or not broker:
                raise OffsetFormatError(f"{what}: broker names must be non-empty strings, got {broker!r}")
            if not isinstance(queues, Mapping):
                raise OffsetFormatError(f"{what}: {topic}/{broker} must map queue ids to offsets")
            for qid, value in queues.items():
                if not isinstance(qid, str) or not qid.isdigit():
                    raise OffsetFormatError(f"{what}: queue id {qid!r} of {topic}/{broker} is not a number")
                if isinstance(value, bool) or not isinstance(value, int):
                    raise OffsetFormatError(f"{what}: {topic}/{broker}/{qid} must be an integer, got {value!r}")
                if value < min_value:
                    raise OffsetFormatError(f"{what}: {topic}/{broker}/{qid} = {value} is not allowed here")
                out[QueueKey(topic, broker, int(qid))] = value
    return out


def loads(text: str, *, what: str = "offset", min_value: int = 0) -> OffsetMap:
    """Parse offset JSON text; see :func:`from_json_dict`."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OffsetFormatError(f"{what}: not valid JSON ({exc.msg} at char {exc.pos})") from None
    return from_json_dict(data, what=what, min_value=min_value)


def total_between(start: Mapping[QueueKey, int], end: Mapping[QueueKey, int]) -> int:
    """How many queue offsets lie in ``[start, end)`` over all queues of ``end`` (missing starts count from 0)."""
    return sum(max(0, e - start.get(q, 0)) for q, e in end.items())
