"""What a request may touch, decided once for both front ends (remoting handlers and the gRPC proxy): the send-path
refusals (broker write permission, topic name, system topics, a topic without write permission) and the store lookup the ACL rule table needs for
codes whose resource is a stored record (VIEW_MESSAGE_BY_ID, CONSUMER_SEND_MSG_BACK, END_TRANSACTION).

``send_refusal`` returns RocketMQ's remoting ``(code, remark)`` or None; the remoting handlers raise it as is, the
gRPC endpoint maps the code (NO_PERMISSION 16 → ``FORBIDDEN``, as RocketMQ 5's proxy maps a broker's 16;
SYSTEM_ERROR 1 for a bad topic name → ``ILLEGAL_TOPIC``).
"""

from __future__ import annotations

from collections.abc import Callable

from broker import topics as T
from broker.store.message_store import MessageStore
from protocol.codes import ResponseCode
from protocol.message_properties import PropertyKey


def send_refusal(topic: str, *, writeable: bool, broker_ip: str) -> tuple[int, str] | None:
    """J's send-path refusals, in its order: a broker without write permission (NO_PERMISSION), a bad topic name
    (SYSTEM_ERROR), a topic producers may not send to (NO_PERMISSION); None when the send may go on."""
    if not writeable:
        return ResponseCode.NO_PERMISSION, f"the broker[{broker_ip}] sending message is forbidden"
    bad = T.topic_error(topic)
    if bad is not None:
        return ResponseCode.SYSTEM_ERROR, bad
    forbidden = T.send_forbidden_remark(topic)
    if forbidden is not None:
        return ResponseCode.NO_PERMISSION, forbidden
    return None


def topic_send_refusal(topic: str, perm: int) -> tuple[int, str] | None:
    """A topic whose permission bits forbid writes (``updateTopic -p 4``): NO_PERMISSION, J's remark."""
    if not T.is_writeable(perm):
        return ResponseCode.NO_PERMISSION, f"the topic[{topic}] sending message is forbidden"
    return None


def record_topic(store: MessageStore) -> Callable[[int], str | None]:
    """commit-log offset → the topic of the record stored there (a transaction half message or a delayed one: the
    topic it is for, ``REAL_TOPIC``); None when no readable record starts there."""

    def lookup(offset: int) -> str | None:
        msg = store.look_message_by_offset(offset)
        if msg is None:
            return None
        real = msg.properties.get(PropertyKey.REAL_TOPIC)
        return real or msg.topic

    return lookup
