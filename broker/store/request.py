"""What the broker asks of the store, one slotted object per request instead of loose arguments passed through
the services, the store façade, the appender and the dispatcher:

=================== =========================================================================================
object              carried from → to
=================== =========================================================================================
``PutRequest``      a service → ``MessageStore.put_message`` → ``Appender.append_one``
``BatchPutRequest`` a service → ``MessageStore.put_messages`` → ``Appender.append_batch``
``Appended``        the appender → ``Dispatcher.submit`` → its drain (what dispatch needs of one append)
``GetRequest``      a service or handler → ``MessageStore.get_message`` (a pull, a POP, a scan of a queue)
``MessageFilter``   a subscription's filter (``broker.filter``) → the ``filter`` of a ``GetRequest``
``MarkSpec``        a filtered ``GetRequest`` → ``FilterMarks`` (whose verdicts the store keeps per entry)
=================== =========================================================================================

``PutRequest``'s positional order is the record's (topic, queue id, flag, sysFlag, born time, born host, body,
properties); ``from_ext`` copies a stored ``MessageExt`` (transaction commit and check-back, schedule re-put,
send-back, dead letters), replacing what it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from protocol.batch import BatchItem
from protocol.message_ext import MessageExt
from protocol.record import IndexFields, RecordMessage

Host = str | tuple[str, int]


class PutRequest(RecordMessage):
    """One message to store: the record's fields its sender gives (``RecordMessage``, which the appender encodes
    from it). ``properties`` is the properties string as sent (stored verbatim) or a dict."""

    __slots__ = ()

    def moved(self, topic: str, queue_id: int, properties: str) -> PutRequest:
        """A request storing this message at another place (a half message, a delay or timer diversion), with
        these properties; this request is left as it is."""
        return PutRequest(
            topic, queue_id, self.flag, self.sys_flag, self.born_timestamp, self.born_host, self.body, properties,
            self.reconsume_times, self.prepared_transaction_offset,
        )  # fmt: skip

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


@dataclass(slots=True)
class BatchPutRequest:
    """A batch for one queue (SEND_BATCH_MESSAGE): the messages share topic, queue, sysFlag, born time and host;
    each item keeps its own body, flag and properties string as received."""

    topic: str
    queue_id: int
    sys_flag: int
    born_timestamp: int
    born_host: Host
    items: Sequence[BatchItem]


# a message's properties as dispatch gets them: the stored string, a dict, or (string, TAGS, KEYS, UNIQ_KEY)
Properties = str | dict[str, str] | tuple[str, str | None, str | None, str | None]


# what an append stored, as ``Appended`` reads it: a put's request, or a record read back (recovery, replication)
Stored = PutRequest | BatchPutRequest | MessageExt | IndexFields


@dataclass(slots=True, init=False)  # its own __init__: compiled (a dataclass's generated one runs interpreted)
class Appended:
    """One append (a single message or a batch) as the dispatcher gets it: everything dispatch needs, so nothing
    is parsed again. Records are consecutive from ``phys``; their queue offsets from ``queue_offset``. Built from
    what was stored (its topic, queue and sysFlag) and what the append gave it (offsets, sizes, store time, the
    properties as stored)."""

    topic: str
    queue_id: int
    queue_offset: int  # of the first record (0 for records that are not dispatched)
    phys: int  # commit-log offset of the first record
    sizes: list[int]  # each record's size
    sys_flag: int
    store_timestamp: int
    properties: list[Properties]  # each record's

    def __init__(
        self,
        stored: Stored,
        queue_offset: int,
        phys: int,
        sizes: list[int],
        store_timestamp: int,
        properties: list[Properties],
    ) -> None:
        self.topic = stored.topic
        self.queue_id = stored.queue_id
        self.queue_offset = queue_offset
        self.phys = phys
        self.sizes = sizes
        self.sys_flag = stored.sys_flag
        self.store_timestamp = store_timestamp
        self.properties = properties

    @property
    def end(self) -> int:
        """The commit-log offset after the last record."""
        return self.phys + sum(self.sizes)


# a message's properties (as dispatch has them) → does the filter keep it? (the same answer as the record test)
PropertiesTest = Callable[[Properties], bool]


@dataclass(frozen=True, slots=True)
class MarkSpec:
    """What a filtered read tells the store so its verdicts can be kept: ``key`` names the filter's semantics (two
    filters with one key must give the same verdicts), ``test`` judges a message from its properties."""

    key: str
    test: PropertiesTest


# consume-queue pre-filter: a unit's tags hash → keep it?
TagsCodeFilter = Callable[[int], bool]
# the record's TAGS (None when it has none) → keep it?
TagsFilter = Callable[[str | None], bool]
# the whole record (a view of it) → keep it?
RecordFilter = Callable[[memoryview], bool]


class MessageFilter:
    """What the store's get applies for one subscription: ``match_code`` (consume-queue tag hash), ``match_tags``
    (the record's TAGS) and ``match_record`` (the whole record); each None when that stage does not apply.
    ``marks``: what lets the store keep ``match_record``'s verdicts per entry (None: they are not kept)."""

    __slots__ = ("marks", "match_code", "match_record", "match_tags")

    def __init__(
        self,
        match_code: TagsCodeFilter | None,
        match_tags: TagsFilter | None = None,
        match_record: RecordFilter | None = None,
        marks: MarkSpec | None = None,
    ) -> None:
        self.match_code = match_code
        self.match_tags = match_tags
        self.match_record = match_record
        self.marks = marks


@dataclass(slots=True)
class GetRequest:
    """A read of one consume queue (RocketMQ's getMessage arguments): up to ``max_msgs`` messages from ``offset``,
    at most ``max_bytes`` (None: the store's maxTransferBytesOnMessageInMemory), through the subscription's
    ``filter`` (None: every message)."""

    group: str
    topic: str
    queue_id: int
    offset: int
    max_msgs: int
    max_bytes: int | None = None
    filter: MessageFilter | None = None
