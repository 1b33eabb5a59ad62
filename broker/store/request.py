"""PutRequest: what one put asks the store to write (the argument of ``MessageStore.put_message``).

One small slotted object instead of ten loose arguments passed through the handler, the store façade and the
appender. The positional order is the record's (topic, queue id, flag, sysFlag, born time, born host, body,
properties); ``from_ext`` copies a stored ``MessageExt`` (transaction commit and check-back, schedule re-put,
send-back, dead letters), replacing what it is given.
"""

from __future__ import annotations

from typing import Any

from protocol.message_ext import MessageExt

Host = str | tuple[str, int]


class PutRequest:
    """One message to store. ``properties`` is the properties string as sent (stored verbatim) or a dict."""

    __slots__ = (
        "body",
        "born_host",
        "born_timestamp",
        "flag",
        "prepared_transaction_offset",
        "properties",
        "queue_id",
        "reconsume_times",
        "sys_flag",
        "topic",
    )

    def __init__(
        self,
        topic: str,
        queue_id: int,
        flag: int,
        sys_flag: int,
        born_timestamp: int,
        born_host: Host,
        body: bytes,
        properties: str | dict[str, str],
        reconsume_times: int = 0,
        prepared_transaction_offset: int = 0,
    ) -> None:
        self.topic = topic
        self.queue_id = queue_id
        self.flag = flag
        self.sys_flag = sys_flag
        self.born_timestamp = born_timestamp
        self.born_host = born_host
        self.body = body
        self.properties = properties
        self.reconsume_times = reconsume_times
        self.prepared_transaction_offset = prepared_transaction_offset

    @classmethod
    def from_ext(cls, msg: MessageExt, **changes: Any) -> PutRequest:
        """A request storing ``msg`` again, with ``changes`` (any field above) replacing its values. The
        prepared-transaction offset is not copied (it names the half message a commit settles): pass it."""
        req = cls(
            msg.topic,
            msg.queue_id,
            msg.flag,
            msg.sys_flag,
            msg.born_timestamp,
            msg.born_host,
            msg.body,
            msg.properties,
            msg.reconsume_times,
        )
        for name, value in changes.items():
            setattr(req, name, value)
        return req

    def __repr__(self) -> str:
        return (
            f"PutRequest(topic={self.topic!r}, queue_id={self.queue_id}, flag={self.flag}, sys_flag={self.sys_flag}, "
            f"body={len(self.body)} bytes, properties={self.properties!r})"
        )
