"""Topic attributes as RocketMQ 5.5.0 knows them (J ``TopicAttributes``, ``AttributeParser``, ``AttributeUtil``).

A topic config carries ``attributes``, a map of name → value stored, registered and returned with it. Requests
change it with a modification string (UPDATE_AND_CREATE_TOPIC header ``attributes``, mqadmin ``updateTopic -a``)::

    +key1=value1,+key2=value2,-key3        + adds or alters, - deletes (no value)

| attribute      | values                                                    | default  | changeable |
|----------------|-----------------------------------------------------------|----------|------------|
| queue.type     | BatchCQ, SimpleCQ                                         | SimpleCQ | no         |
| cleanup.policy | DELETE, COMPACTION                                        | DELETE   | no         |
| message.type   | UNSPECIFIED, NORMAL, FIFO, DELAY, TRANSACTION, PRIORITY,  | NORMAL   | yes        |
|                | LITE, MIXED                                               |          |            |
| reserve.time   | integer -1 .. 2^63-1                                      | -1       | yes        |
| lite.topic.    | integer -1 .. 43200 (minutes, 30 days)                    | -1       | yes        |
| expiration     |                                                           |          |            |

Rules (J): while creating a topic only ``+`` keys are allowed and every attribute may be set; on an existing topic
``+`` adds or alters (an unchangeable attribute is refused), ``-`` deletes an existing key; an unknown key, a value
outside its set or range, a key given twice, or a malformed item is refused with J's message. ``MIXED`` is refused
unless the broker enables mixed message types (``enableMixedMessageType``, default false).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

MESSAGE_TYPE: Final = "message.type"
MESSAGE_TYPES: Final = ("UNSPECIFIED", "NORMAL", "FIFO", "DELAY", "TRANSACTION", "PRIORITY", "LITE", "MIXED")


class TopicAttributeError(ValueError):
    """A modification string or value J would refuse; the text is J's message."""


class MixedMessageTypeError(TopicAttributeError):
    """``+message.type=MIXED`` on a broker without mixed message types (J answers INVALID_PARAMETER)."""


@dataclass(frozen=True, slots=True)
class _Attribute:
    name: str
    changeable: bool
    values: frozenset[str] | None = None  # an enum attribute's set; None: a long range
    low: int = -1
    high: int = (1 << 63) - 1

    def verify(self, value: str) -> None:
        if self.values is not None:
            if value not in self.values:
                raise TopicAttributeError(f"value is not in set: [{', '.join(sorted(self.values))}]")
            return
        try:
            n = int(value)
        except ValueError:
            raise TopicAttributeError(f'For input string: "{value}"') from None
        if not self.low <= n <= self.high:
            raise TopicAttributeError(f"value is not in range({self.low}, {self.high})")


TOPIC_ATTRIBUTES: Final[Mapping[str, _Attribute]] = {
    a.name: a
    for a in (
        _Attribute("queue.type", False, frozenset({"BatchCQ", "SimpleCQ"})),
        _Attribute("cleanup.policy", False, frozenset({"DELETE", "COMPACTION"})),
        _Attribute(MESSAGE_TYPE, True, frozenset(MESSAGE_TYPES)),
        _Attribute("reserve.time", True),
        _Attribute("lite.topic.expiration", True, high=30 * 24 * 60),
    )
}


def parse_modification(text: str | None) -> dict[str, str]:
    """J ``AttributeParser.parseToMap``: ``"+a=1,-b"`` → ``{"+a": "1", "-b": ""}`` (keys keep their sign)."""
    out: dict[str, str] = {}
    if not text:
        return out
    for kv in text.split(","):
        if "=" in kv:
            key, _, value = kv.partition("=")
            value = value.split("=", 1)[0]
            if "+" not in key:
                raise TopicAttributeError(f"add/alter attribute format is wrong: {key}")
        else:
            key, value = kv, ""
            if "-" not in key:
                raise TopicAttributeError(f"delete attribute format is wrong: {key}")
        if key in out:
            raise TopicAttributeError(f"key duplication: {key}")
        out[key] = value
    return out


def apply_modification(
    create: bool, current: Mapping[str, str], modification: Mapping[str, str], *, allow_mixed: bool = False
) -> dict[str, str]:
    """J ``AttributeUtil.alterCurrentAttributes``: the attributes after ``modification`` (signed keys, as
    ``parse_modification`` returns them) is applied to ``current``; raises ``TopicAttributeError`` with J's text."""
    if not allow_mixed and modification.get("+" + MESSAGE_TYPE) == "MIXED":
        raise MixedMessageTypeError("MIXED message type is not supported.")
    result = dict(current)
    seen: set[str] = set()
    for key, value in modification.items():
        real = key[1:]
        if not real or "+" in real or "-" in real:
            raise TopicAttributeError("kv string format wrong.")
        if real in seen:
            raise TopicAttributeError(f"alter duplication key. key: {real}")
        seen.add(real)
        attr = TOPIC_ATTRIBUTES.get(real)
        if key.startswith("+"):
            if attr is None:
                raise TopicAttributeError(f"unsupported key: {real}")
            if not create and not attr.changeable:
                raise TopicAttributeError(f"attempt to update an unchangeable attribute. key: {real}")
            attr.verify(value)
            result[real] = value
        elif create:
            raise TopicAttributeError(f"only add attribute is supported while creating topic. key: {real}")
        elif key.startswith("-"):
            if real not in current:
                raise TopicAttributeError(f"attempt to delete a nonexistent key: {real}")
            if attr is None:
                raise TopicAttributeError(f"unsupported key: {real}")
            if not attr.changeable:
                raise TopicAttributeError(f"attempt to update an unchangeable attribute. key: {real}")
            result.pop(real, None)
        else:
            raise TopicAttributeError(f"wrong format key: {real}")
    return result
