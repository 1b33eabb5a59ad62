"""The decoded stored message: ``MessageExt`` (what consumers receive, every record field) and
``LazyMessageExt`` (its properties text split into a dict only when first read). Decoding records into them is
``protocol.record_decode``; the fields are ``protocol.record``'s table.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Final

from protocol.message_properties import PropertyKey, append_properties, decode_properties, get_property
from protocol.msg_id import create_offset_msg_id
from protocol.record import STORE_CRC_PROPERTY


@dataclass(slots=True)
class MessageExt:
    """A decoded stored message (what consumers receive)."""

    topic: str
    body: bytes
    flag: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    queue_id: int = 0
    queue_offset: int = 0
    commit_log_offset: int = 0
    sys_flag: int = 0
    born_timestamp: int = 0
    born_host: tuple[str, int] = ("127.0.0.1", 0)
    store_timestamp: int = 0
    store_host: tuple[str, int] = ("127.0.0.1", 0)
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0
    body_crc: int = 0
    store_size: int = 0

    @property
    def tags(self) -> str | None:
        return self.properties.get(PropertyKey.TAGS)

    @property
    def keys(self) -> list[str]:
        raw = self.properties.get(PropertyKey.KEYS)
        return [k for k in raw.split(" ") if k] if raw else []

    @property
    def offset_msg_id(self) -> str:
        return create_offset_msg_id(self.store_host[0], self.store_host[1], self.commit_log_offset)

    @property
    def msg_id(self) -> str:
        """The client-visible id: UNIQ_KEY when the producer set one, else the offset id."""
        return self.properties.get(PropertyKey.UNIQ_KEY) or self.offset_msg_id


_PROPERTIES_SLOT: Any = MessageExt.__dict__["properties"]  # the slot under LazyMessageExt's property
_MESSAGE_FIELDS: Final = tuple(f.name for f in fields(MessageExt))


class LazyMessageExt(MessageExt):
    """A ``MessageExt`` whose properties text is split into a dict only when ``properties`` is first read (a push
    consumer's listener often never reads them); ``tags`` and ``msg_id`` read their one property from the text.
    Equality, repr, ``dataclasses.replace`` and pickling go through ``properties`` and see the decoded dict."""

    __slots__ = ("_raw_props",)
    _raw_props: str | None

    def __init__(
        self,
        topic: str,
        body: bytes,
        flag: int = 0,
        properties: dict[str, str] | None = None,
        queue_id: int = 0,
        queue_offset: int = 0,
        commit_log_offset: int = 0,
        sys_flag: int = 0,
        born_timestamp: int = 0,
        born_host: tuple[str, int] = ("127.0.0.1", 0),
        store_timestamp: int = 0,
        store_host: tuple[str, int] = ("127.0.0.1", 0),
        reconsume_times: int = 0,
        prepared_transaction_offset: int = 0,
        body_crc: int = 0,
        store_size: int = 0,
        raw_props: str = "",
    ) -> None:
        """``MessageExt``'s fields, in its order (``dataclasses.replace`` passes them by name); ``properties``
        given as a dict is taken as is, else ``raw_props`` (encoded pairs) is split when first read. Written out,
        not inherited, so the pull-body decode sets the text in the same call, without the ``properties`` setter."""
        self.topic = topic
        self.body = body
        self.flag = flag
        self.queue_id = queue_id
        self.queue_offset = queue_offset
        self.commit_log_offset = commit_log_offset
        self.sys_flag = sys_flag
        self.born_timestamp = born_timestamp
        self.born_host = born_host
        self.store_timestamp = store_timestamp
        self.store_host = store_host
        self.reconsume_times = reconsume_times
        self.prepared_transaction_offset = prepared_transaction_offset
        self.body_crc = body_crc
        self.store_size = store_size
        if properties is None:
            self._raw_props = raw_props
        else:
            self._raw_props = None
            _PROPERTIES_SLOT.__set__(self, properties)

    @property
    def properties(self) -> dict[str, str]:
        raw = self._raw_props
        if raw is None:
            return _PROPERTIES_SLOT.__get__(self)  # type: ignore[no-any-return]
        self._raw_props = None
        props = decode_properties(raw)
        props.pop(STORE_CRC_PROPERTY, None)
        _PROPERTIES_SLOT.__set__(self, props)
        return props

    @properties.setter
    def properties(self, value: dict[str, str]) -> None:
        self._raw_props = None
        _PROPERTIES_SLOT.__set__(self, value)

    @property
    def tags(self) -> str | None:
        raw = self._raw_props
        return self.properties.get(PropertyKey.TAGS) if raw is None else get_property(raw, PropertyKey.TAGS)

    @property
    def msg_id(self) -> str:
        raw = self._raw_props
        uniq = self.properties.get(PropertyKey.UNIQ_KEY) if raw is None else get_property(raw, PropertyKey.UNIQ_KEY)
        return uniq or self.offset_msg_id

    def __eq__(self, other: object) -> bool:
        """Equal to any ``MessageExt`` with the same fields (the dataclass ``__eq__`` wants the same class)."""
        if not isinstance(other, MessageExt):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _MESSAGE_FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, as MessageExt

    def add_properties(self, text: str) -> None:
        """Add the pairs of ``text`` (encoded properties, later ones win) without decoding what is there."""
        raw = self._raw_props
        if raw is None:
            self.properties.update(decode_properties(text))
        else:
            self._raw_props = append_properties(raw, text)
