"""The client's message types: what a producer sends, a queue address, and what consumers receive.

``Message`` is what users build; ``MessageQueue`` (``protocol.bodies.MessageQueue``, re-exported) names one queue
(topic, broker, id) and orders like RocketMQ's (topic, then broker name, then queue id), which every allocation
strategy depends on. Received messages are
``protocol.message_ext.MessageExt`` (body, keys, tags, properties, queue and offset fields), re-exported here.
``validate_topic`` / ``validate_group`` apply J's client-side name rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from client.errors import MQClientError
from protocol.bodies import MessageQueue as MessageQueue
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey
from protocol.rules import GROUP_MAX_LENGTH as GROUP_MAX_LENGTH
from protocol.rules import NOT_ALLOWED_SEND, VALID_NAME
from protocol.rules import TOPIC_MAX_LENGTH as TOPIC_MAX_LENGTH
from protocol.rules import is_valid_name as is_valid_name

ReceivedMessage = MessageExt

_NAME = VALID_NAME
NOT_ALLOWED_SEND_TOPICS = NOT_ALLOWED_SEND  # J TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET


_SENDABLE: set[str] = set()  # topics that passed validate_topic(sending=True): a send checks its topic once
_SENDABLE_MAX = 4096


def validate_topic(topic: str, *, sending: bool = False) -> None:
    """J ``Validators.checkTopic``: not blank, ``[%|a-zA-Z0-9_-]``, at most 127 characters; some system topics
    refuse sends."""
    if sending and topic in _SENDABLE:
        return
    if not topic or not topic.strip():
        raise MQClientError("The specified topic is blank.")
    if len(topic) > TOPIC_MAX_LENGTH:
        raise MQClientError(f"The specified topic is longer than topic max length {TOPIC_MAX_LENGTH}.")
    if not _NAME.match(topic):
        raise MQClientError(
            f"The specified topic[{topic}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
        )
    if sending and topic in NOT_ALLOWED_SEND_TOPICS:
        raise MQClientError(f"Sending message to topic[{topic}] is forbidden.")
    if sending and len(_SENDABLE) < _SENDABLE_MAX:
        _SENDABLE.add(topic)


def validate_group(group: str) -> None:
    if not group or not group.strip():
        raise MQClientError("the specified group is blank")
    if len(group) > GROUP_MAX_LENGTH:
        raise MQClientError(f"the specified group is longer than group max length {GROUP_MAX_LENGTH}.")
    if not _NAME.match(group):
        raise MQClientError(
            f"the specified group[{group}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
        )


@dataclass(slots=True)
class Message:
    """A message to send. ``keys`` are indexed by the broker (QUERY_MESSAGE); ``tags`` drive consumer filtering.
    ``deliver_time_ms`` (epoch ms, J ``setDeliverTimeMs``) or ``delay_ms`` (J ``setDelayTimeMs``) make it a timer
    message, delivered at that time to the precision of the broker's timer; ``delay_level`` uses the fixed levels."""

    topic: str
    body: bytes
    tags: str | None = None
    keys: list[str] | str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    flag: int = 0
    delay_level: int = 0
    wait_store_ok: bool = True
    deliver_time_ms: int = 0
    delay_ms: int = 0

    def __post_init__(self) -> None:
        body = self.body
        if not isinstance(body, bytes | bytearray | memoryview):
            hint = ": encode it first, e.g. body.encode()" if isinstance(body, str) else ""
            raise TypeError(f"Message body must be bytes, not {type(body).__name__}{hint}")

    def wire_properties(self) -> dict[str, str]:
        """User properties plus the system ones RocketMQ carries in the same map (TAGS, KEYS, DELAY, WAIT)."""
        props = dict(self.properties)
        if self.tags:
            props[PropertyKey.TAGS] = self.tags
        if self.keys:
            props[PropertyKey.KEYS] = self.keys if isinstance(self.keys, str) else " ".join(self.keys)
        if self.delay_level > 0:
            props[PropertyKey.DELAY] = str(self.delay_level)
        if self.deliver_time_ms > 0:
            props["TIMER_DELIVER_MS"] = str(self.deliver_time_ms)
        if self.delay_ms > 0:
            props["TIMER_DELAY_MS"] = str(self.delay_ms)
        props[PropertyKey.WAIT] = "true" if self.wait_store_ok else "false"
        return props
