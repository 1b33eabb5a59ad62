"""MessageQueue, the key of the MessageQueue-keyed maps, and the helpers that read and write such maps.

A MessageQueue (MQ) is ``{"brokerName":b,"queueId":q,"topic":t}`` (fastjson's alphabetical order). As a map key it
arrives as a JSON object key (fastjson), as J's ``toString()`` (``MessageQueue [topic=t, brokerName=b, queueId=q]``)
or as the JSON text of the object; it is written as an object key, the only form J parses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    PlainSerializer,
    PlainValidator,
)

from protocol.bodies.lenient import BodyBytes, BodyDecodeError, _dumps, _long, loads_lenient

# -- MessageQueue ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class MessageQueue:
    """One queue, ordered like J's ``MessageQueue.compareTo`` (topic, then broker name, then queue id)."""

    topic: str
    broker_name: str
    queue_id: int

    def to_json(self) -> dict[str, Any]:
        return {"brokerName": self.broker_name, "queueId": self.queue_id, "topic": self.topic}

    def json_key(self) -> str:
        """The object-key text fastjson writes for this queue in a map."""
        return _dumps(self.to_json())

    @classmethod
    def from_json(cls, d: Mapping[Any, Any]) -> MessageQueue:
        try:
            return cls(str(d["topic"]), str(d["brokerName"]), _long(d["queueId"], "queueId"))
        except KeyError as exc:
            raise BodyDecodeError(f"MessageQueue without {exc.args[0]}: {dict(d)!r}") from None
        except TypeError:
            raise BodyDecodeError(f"MessageQueue is not an object: {d!r}") from None

    def __str__(self) -> str:
        return f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, queueId={self.queue_id}]"


_MQ_TO_STRING = re.compile(r"MessageQueue \[topic=(.*), brokerName=(.*), queueId=(-?\d+)\]")


def _mq_key(d: dict[Any, Any]) -> Hashable:
    return MessageQueue.from_json(d)


def _as_mq(key: Any) -> MessageQueue:
    """A map key that names a MessageQueue: an object key, J's ``toString()`` or JSON text of the object."""
    if isinstance(key, MessageQueue):
        return key
    if isinstance(key, str):
        m = _MQ_TO_STRING.fullmatch(key)
        if m is not None:
            return MessageQueue(m.group(1), m.group(2), int(m.group(3)))
        try:
            obj = json.loads(key)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            return MessageQueue.from_json(obj)
    raise BodyDecodeError(f"map key {key!r} is not a MessageQueue")


def _mq_validate(value: Any) -> MessageQueue:
    if isinstance(value, MessageQueue):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"MessageQueue is not an object: {value!r}")
    return MessageQueue.from_json(value)


MQ = Annotated[MessageQueue, PlainValidator(_mq_validate), PlainSerializer(MessageQueue.to_json)]
"""MessageQueue as a pydantic field type (reads and writes the wire object)."""


def _mq_table(raw: Any, what: str) -> list[tuple[MessageQueue, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise BodyDecodeError(f"{what} is not an object")
    return [(_as_mq(k), v) for k, v in raw.items()]


def _mq_table_json(table: Mapping[MessageQueue, Any], value: Callable[[Any], Any]) -> str:
    """A MessageQueue-keyed map as fastjson writes it (object keys), sorted for a stable output."""
    return "{" + ",".join(f"{mq.json_key()}:{_dumps(value(v))}" for mq, v in sorted(table.items())) + "}"


def _decode_object(body: BodyBytes, what: str) -> dict[Any, Any]:
    if not body:
        raise BodyDecodeError(f"{what}: empty body")
    raw = loads_lenient(body, object_key=_mq_key)
    if not isinstance(raw, dict):
        raise BodyDecodeError(f"{what}: not a JSON object")
    return raw
