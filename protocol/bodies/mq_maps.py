"""MessageQueue-keyed bodies, hand-written dataclasses because J's fastjson writes such maps with JSON objects as
keys (``protocol.bodies.mq``).

| body (class)                           | command(s)                                   | shape                                             |
|----------------------------------------|----------------------------------------------|---------------------------------------------------|
| ResetOffsetBody (J form)               | RESET_CONSUMER_CLIENT_OFFSET, INVOKE_BROKER_ | {"offsetTable":{{MQ}:offset}}  (object keys)      |
|                                        | TO_RESET_OFFSET reply                        |                                                   |
| ResetOffsetBody (C form, cpp=True)     | RESET_CONSUMER_CLIENT_OFFSET to C++          | {"offsetTable":[{brokerName,offset,queueId,topic}]}|
| GetConsumerStatusBody                  | GET_CONSUMER_STATUS_FROM_CLIENT …            | {messageQueueTable:{{MQ}:offset},                 |
|                                        |                                              |  consumerTable:{clientId:{{MQ}:offset}}}          |
| TopicStatsTable                        | GET_TOPIC_STATS_INFO reply                   | {offsetTable:{{MQ}:{lastUpdateTimestamp,          |
|                                        |                                              |  maxOffset, minOffset}}}                          |
| ConsumeStats                           | GET_CONSUME_STATS reply                      | {consumeTps, offsetTable:{{MQ}:{brokerOffset,     |
|                                        |                                              |  consumerOffset, lastTimestamp, pullOffset}}}     |
| ConsumeStatsList                       | GET_BROKER_CONSUME_STATS reply               | {brokerAddr, consumeStatsList:[{group:            |
|                                        |                                              |  [ConsumeStats]}], totalDiff}                     |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from protocol.bodies.lenient import BodyBytes, BodyDecodeError, _dumps, _long, dumps
from protocol.bodies.mq import MessageQueue, _decode_object, _mq_table, _mq_table_json

# -- MessageQueue-keyed bodies (hand-written: fastjson object keys) ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResetOffsetBody:
    """Offsets to reset a consumer group to. ``encode()`` writes J's object-key form; ``encode(cpp=True)`` the list
    form C++ reads (pick it when the target client's language is CPP, trap 13). ``decode`` reads both."""

    offset_table: dict[MessageQueue, int] = field(default_factory=dict)

    def encode(self, *, cpp: bool = False) -> bytes:
        if cpp:
            rows = [
                {"brokerName": mq.broker_name, "offset": off, "queueId": mq.queue_id, "topic": mq.topic}
                for mq, off in sorted(self.offset_table.items())
            ]
            return dumps({"offsetTable": rows})
        return ('{"offsetTable":' + _mq_table_json(self.offset_table, int) + "}").encode("utf-8")

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        raw = _decode_object(body, "ResetOffsetBody")
        table = raw.get("offsetTable")
        out: dict[MessageQueue, int] = {}
        if isinstance(table, list):
            for row in table:
                if not isinstance(row, dict):
                    raise BodyDecodeError("ResetOffsetBody: offsetTable entry is not an object")
                out[MessageQueue.from_json(row)] = _long(row.get("offset"), "offset")
            return cls(out)
        for mq, off in _mq_table(table, "ResetOffsetBody.offsetTable"):
            out[mq] = _long(off, "offset")
        return cls(out)


def encode_consumer_running_info(
    properties: Mapping[str, str],
    subscriptions: Sequence[Mapping[str, Any]],
    mq_table: Mapping[MessageQueue, Mapping[str, Any]],
    status_table: Mapping[str, Mapping[str, Any]],
    jstack: str | None = None,
) -> bytes:
    """A consumer's GET_CONSUMER_RUNNING_INFO reply as J's ``ConsumerRunningInfo`` reads it (fastjson, keys in
    alphabetical order, null ``jstack`` left out; the C++ client writes the same shape, golden frame
    ``cpp_consumer_171_br_c2s_RESP0``):

    =============== ================================================================================================
    key             value
    =============== ================================================================================================
    jstack          thread dump, only when the request asked for it (``jstackEnable``)
    mqTable         {<MessageQueue object>: ProcessQueueInfo} — commitOffset, cachedMsgMinOffset/MaxOffset/Count,
                    cachedMsgSizeInMiB, transactionMsg*, locked, tryUnlockTimes, lastLockTimestamp, droped,
                    lastPullTimestamp, lastConsumeTimestamp (ms)
    properties      PROP_CONSUME_TYPE, PROP_CONSUMEORDERLY, PROP_CLIENT_VERSION, PROP_NAMESERVER_ADDR, … (strings)
    statusTable     {topic: ConsumeStatus} — pullRT, pullTPS, consumeRT, consumeOKTPS, consumeFailedTPS (doubles),
                    consumeFailedMsgs (long)
    subscriptionSet [SubscriptionData] — topic, subString, tagsSet, codeSet, subVersion, classFilterMode
    =============== ================================================================================================
    """
    head = "{" + ('"jstack":' + _dumps(jstack) + "," if jstack is not None else "")
    return (
        head
        + '"mqTable":'
        + _mq_table_json(mq_table, lambda v: dict(sorted(v.items())))
        + ',"properties":'
        + _dumps(dict(sorted(properties.items())))
        + ',"statusTable":'
        + _dumps({t: dict(sorted(v.items())) for t, v in sorted(status_table.items())})
        + ',"subscriptionSet":'
        + _dumps(sorted((dict(sorted(x.items())) for x in subscriptions), key=lambda d: str(d.get("topic"))))
        + "}"
    ).encode("utf-8")


@dataclass(frozen=True, slots=True)
class GetConsumerStatusBody:
    """Offsets a consumer holds: ``message_queue_table`` for one client, ``consumer_table`` per client id."""

    message_queue_table: dict[MessageQueue, int] = field(default_factory=dict)
    consumer_table: dict[str, dict[MessageQueue, int]] = field(default_factory=dict)

    def encode(self) -> bytes:
        consumers = ",".join(
            f"{_dumps(cid)}:{_mq_table_json(t, int)}" for cid, t in sorted(self.consumer_table.items())
        )
        return (
            '{"consumerTable":{'
            + consumers
            + '},"messageQueueTable":'
            + _mq_table_json(self.message_queue_table, int)
            + "}"
        ).encode("utf-8")

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        raw = _decode_object(body, "GetConsumerStatusBody")
        mqt = {mq: _long(v, "offset") for mq, v in _mq_table(raw.get("messageQueueTable"), "messageQueueTable")}
        consumers = raw.get("consumerTable") or {}
        if not isinstance(consumers, dict):
            raise BodyDecodeError("GetConsumerStatusBody: consumerTable is not an object")
        ct = {
            str(cid): {mq: _long(v, "offset") for mq, v in _mq_table(t, "consumerTable entry")}
            for cid, t in consumers.items()
        }
        return cls(mqt, ct)


def _longs(what: str, d: Any, keys: tuple[str, ...]) -> list[int]:
    """The fields ``keys`` of the JSON object ``d`` (an absent one is 0) as longs, in that order."""
    if not isinstance(d, dict):
        raise BodyDecodeError(f"{what} is not an object: {d!r}")
    return [_long(d.get(k, 0), k) for k in keys]


@dataclass(frozen=True, slots=True)
class TopicOffset:
    min_offset: int = 0
    max_offset: int = 0
    last_update_timestamp: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "lastUpdateTimestamp": self.last_update_timestamp,
            "maxOffset": self.max_offset,
            "minOffset": self.min_offset,
        }

    @classmethod
    def from_json(cls, d: Any) -> TopicOffset:
        return cls(*_longs("TopicOffset", d, ("minOffset", "maxOffset", "lastUpdateTimestamp")))


@dataclass(frozen=True, slots=True)
class TopicStatsTable:
    """GET_TOPIC_STATS_INFO reply: min/max offset and last store time of every queue of a topic on one broker."""

    offset_table: dict[MessageQueue, TopicOffset] = field(default_factory=dict)

    def encode(self) -> bytes:
        return ('{"offsetTable":' + _mq_table_json(self.offset_table, TopicOffset.to_json) + "}").encode("utf-8")

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        raw = _decode_object(body, "TopicStatsTable")
        return cls({mq: TopicOffset.from_json(v) for mq, v in _mq_table(raw.get("offsetTable"), "offsetTable")})


@dataclass(frozen=True, slots=True)
class OffsetWrapper:
    broker_offset: int = 0
    consumer_offset: int = 0
    last_timestamp: int = 0
    pull_offset: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "brokerOffset": self.broker_offset,
            "consumerOffset": self.consumer_offset,
            "lastTimestamp": self.last_timestamp,
            "pullOffset": self.pull_offset,
        }

    @classmethod
    def from_json(cls, d: Any) -> OffsetWrapper:
        return cls(*_longs("OffsetWrapper", d, ("brokerOffset", "consumerOffset", "lastTimestamp", "pullOffset")))


@dataclass(frozen=True, slots=True)
class ConsumeStats:
    """GET_CONSUME_STATS reply: per queue, the broker's max offset and the group's committed offset."""

    offset_table: dict[MessageQueue, OffsetWrapper] = field(default_factory=dict)
    consume_tps: float = 0.0

    def total_diff(self) -> int:
        """J ``computeTotalDiff``: the group's lag over every queue."""
        return sum(w.broker_offset - w.consumer_offset for w in self.offset_table.values())

    def encode(self) -> bytes:
        return (
            '{"consumeTps":'
            + _dumps(float(self.consume_tps))
            + ',"offsetTable":'
            + _mq_table_json(self.offset_table, OffsetWrapper.to_json)
            + "}"
        ).encode("utf-8")

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        return cls.from_json(_decode_object(body, "ConsumeStats"))

    @classmethod
    def from_json(cls, raw: Any) -> Self:
        """From the parsed object (MessageQueue keys already read by ``loads_lenient(..., object_key=...)``)."""
        if not isinstance(raw, dict):
            raise BodyDecodeError(f"ConsumeStats is not an object: {raw!r}")
        tps = raw.get("consumeTps", 0.0)
        if isinstance(tps, str):
            try:
                tps = float(tps)
            except ValueError:
                raise BodyDecodeError(f"ConsumeStats: consumeTps {tps!r} is not a number") from None
        if isinstance(tps, bool) or not isinstance(tps, int | float):
            raise BodyDecodeError(f"ConsumeStats: consumeTps {tps!r} is not a number")
        table = {mq: OffsetWrapper.from_json(v) for mq, v in _mq_table(raw.get("offsetTable"), "offsetTable")}
        return cls(table, float(tps))


@dataclass(frozen=True, slots=True)
class ConsumeStatsList:
    """GET_BROKER_CONSUME_STATS reply (J ``ConsumeStatsList``): per subscription group, one ConsumeStats per topic
    it has committed offsets on, and the lag summed over all of them::

        {"brokerAddr":"ip:port","consumeStatsList":[{"<group>":[<ConsumeStats>,…]},…],"totalDiff":N}
    """

    broker_addr: str | None = None
    consume_stats_list: list[dict[str, list[ConsumeStats]]] = field(default_factory=list)
    total_diff: int = 0

    def encode(self) -> bytes:
        groups = ",".join(
            "{"
            + ",".join(f"{_dumps(g)}:[" + ",".join(cs.encode().decode() for cs in lst) + "]" for g, lst in m.items())
            + "}"
            for m in self.consume_stats_list
        )
        return (
            '{"brokerAddr":'
            + _dumps(self.broker_addr)
            + ',"consumeStatsList":['
            + groups
            + '],"totalDiff":'
            + _dumps(int(self.total_diff))
            + "}"
        ).encode("utf-8")

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        raw = _decode_object(body, "ConsumeStatsList")
        entries = raw.get("consumeStatsList") or []
        if not isinstance(entries, list):
            raise BodyDecodeError("ConsumeStatsList: consumeStatsList is not a list")
        out: list[dict[str, list[ConsumeStats]]] = []
        for m in entries:
            if not isinstance(m, dict):
                raise BodyDecodeError("ConsumeStatsList: an entry is not an object")
            group_map: dict[str, list[ConsumeStats]] = {}
            for g, lst in m.items():
                if not isinstance(lst, list):
                    raise BodyDecodeError(f"ConsumeStatsList: the stats of group {g!r} are not a list")
                group_map[str(g)] = [ConsumeStats.from_json(cs) for cs in lst]
            out.append(group_map)
        addr = raw.get("brokerAddr")
        return cls(None if addr is None else str(addr), out, _long(raw.get("totalDiff", 0), "totalDiff"))
