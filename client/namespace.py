"""The SDK side of namespaces (``namespace=`` on producers and consumers): names the user gives are wrapped
(``ns%Topic``, ``%RETRY%ns%group``, ``protocol.namespace``) before they reach a broker, and received messages get
their topic back without the namespace, as the Java client does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from client.message import Message
from protocol.message_ext import MessageExt
from protocol.namespace import unwrap, wrap


def wrap_message(namespace: str, msg: Message) -> Message:
    """``msg`` with its topic in ``namespace`` (the same object when it already is)."""
    topic = wrap(namespace, msg.topic)
    return msg if topic == msg.topic else replace(msg, topic=topic)


@contextmanager
def topics_unwrapped(namespace: str, msgs: list[MessageExt]) -> Iterator[None]:
    """While the block runs (a listener call), ``msgs`` show their topics without ``namespace``; restored after,
    since the consumer's own bookkeeping (send-back, retry topic) needs the real names."""
    real = [m.topic for m in msgs]
    for m in msgs:
        m.topic = unwrap(m.topic, namespace)
    try:
        yield
    finally:
        for m, topic in zip(msgs, real, strict=True):
            m.topic = topic
