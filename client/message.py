"""The client's message types: what a producer sends, a queue address, and what consumers receive.

``Message`` is what users build; ``MessageQueue`` names one queue (topic, broker, id) and orders like RocketMQ's
(topic, then broker name, then queue id), which every allocation strategy depends on. Received messages are
``protocol.message.MessageExt`` (body, keys, tags, properties, queue and offset fields), re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol.message import MessageExt, PropertyKey

ReceivedMessage = MessageExt


@dataclass(slots=True)
class Message:
    """A message to send. ``keys`` are indexed by the broker (QUERY_MESSAGE); ``tags`` drive consumer filtering."""

    topic: str
    body: bytes
    tags: str | None = None
    keys: list[str] | str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    flag: int = 0
    delay_level: int = 0
    wait_store_ok: bool = True

    def wire_properties(self) -> dict[str, str]:
        """User properties plus the system ones RocketMQ carries in the same map."""
        props = dict(self.properties)
        if self.tags:
            props[PropertyKey.TAGS] = self.tags
        if self.keys:
            props[PropertyKey.KEYS] = self.keys if isinstance(self.keys, str) else " ".join(self.keys)
        if self.delay_level > 0:
            props[PropertyKey.DELAY] = str(self.delay_level)
        props[PropertyKey.WAIT] = "true" if self.wait_store_ok else "false"
        return props


@dataclass(frozen=True, slots=True, order=True)
class MessageQueue:
    topic: str
    broker_name: str
    queue_id: int

    def to_json(self) -> dict[str, object]:
        return {"topic": self.topic, "brokerName": self.broker_name, "queueId": self.queue_id}

    @classmethod
    def from_json(cls, d: dict[str, object]) -> MessageQueue:
        return cls(str(d["topic"]), str(d["brokerName"]), int(d["queueId"]))  # type: ignore[call-overload]

    def __str__(self) -> str:
        return f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, queueId={self.queue_id}]"
