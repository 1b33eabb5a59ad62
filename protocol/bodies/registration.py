"""Topic configs and broker registration (REGISTER_BROKER, GET_ALL_TOPIC_CONFIG, QUERY_DATA_VERSION).

| body (class)                           | command(s)                                   | shape                                             |
|----------------------------------------|----------------------------------------------|---------------------------------------------------|
| RegisterBrokerBody                     | REGISTER_BROKER                              | {topicConfigSerializeWrapper:{topicConfigTable:   |
|                                        |                                              |  {name:TopicConfig}, dataVersion}, filterServer-  |
|                                        |                                              |  List:[]}; or the zlib form (below)               |
| TopicConfigSerializeWrapper            | GET_ALL_TOPIC_CONFIG reply                   | {topicConfigTable:{name:TopicConfig}, dataVersion}|
| TopicConfig                            | (in the above), GET_TOPIC_CONFIG (351) reply | {topicName, readQueueNums, writeQueueNums, perm,  |
|                                        |                                              |  topicFilterType, topicSysFlag, order,            |
|                                        |                                              |  attributes:{name:value}}                         |
| CreateTopicListRequestBody             | UPDATE_AND_CREATE_TOPIC_LIST (18)            | {topicConfigList:[TopicConfig]}                   |
| DataVersion                            | QUERY_DATA_VERSION body                      | {counter, timestamp}                              |

Compressed RegisterBrokerBody (header ``compressed=true``; J ``RegisterBrokerBody.encode(true)``): one zlib stream
(Deflater BEST_COMPRESSION) of big-endian parts::

    | int32 len | DataVersion JSON | int32 topicCount | { int32 len | TopicConfig line }* | int32 len | filterServerList JSON |

A TopicConfig line is J ``TopicConfig.encode()``: fields separated by one space,
``topicName readQueueNums writeQueueNums perm topicFilterType [attributes JSON]`` (4.9.7 writes and requires the
first five; 5.x appends the sixth, written here only when the topic has attributes, read when present).
``topicSysFlag`` and ``order`` do not travel in this form: they read as 0 and false.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any, Final, Self

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from protocol.bodies.base import JsonBody, _none_is_empty_dict, _none_is_empty_list
from protocol.bodies.lenient import BodyBytes, BodyDecodeError, _text, dumps, loads_lenient
from protocol.rules import PERM_RW

MAX_INFLATED: Final = 64 * 1024 * 1024
"""A compressed RegisterBrokerBody may not inflate beyond this (zip-bomb guard)."""

_I32: Final = struct.Struct(">i")
# -- topic configs and registration -----------------------------------------------------------------------------------


class DataVersion(JsonBody):
    """J ``DataVersion``: bumped on every config change; the name server compares it to skip unchanged
    registrations."""

    counter: int = 0
    timestamp: int = 0

    def bumped(self, now_ms: int) -> DataVersion:
        """J ``nextVersion()``: timestamp = now, counter + 1."""
        return DataVersion(counter=self.counter + 1, timestamp=now_ms)


class TopicConfig(JsonBody):
    topic_name: str = Field(validation_alias="topicName", serialization_alias="topicName")
    read_queue_nums: int = Field(default=16, validation_alias="readQueueNums", serialization_alias="readQueueNums")
    write_queue_nums: int = Field(default=16, validation_alias="writeQueueNums", serialization_alias="writeQueueNums")
    perm: int = PERM_RW
    topic_filter_type: str = Field(
        default="SINGLE_TAG", validation_alias="topicFilterType", serialization_alias="topicFilterType"
    )
    topic_sys_flag: int = Field(default=0, validation_alias="topicSysFlag", serialization_alias="topicSysFlag")
    order: bool = False
    attributes: dict[str, str] = Field(default_factory=dict)

    _none_attrs = field_validator("attributes", mode="before")(_none_is_empty_dict)

    @classmethod
    def with_queues(
        cls,
        topic_name: str,
        queue_nums: int = 16,
        perm: int = PERM_RW,
        *,
        topic_filter_type: str = "SINGLE_TAG",
        topic_sys_flag: int = 0,
    ) -> TopicConfig:
        """A topic with ``queue_nums`` read and write queues (how the broker makes the topics it creates)."""
        return cls(
            topic_name=topic_name,
            read_queue_nums=queue_nums,
            write_queue_nums=queue_nums,
            perm=perm,
            topic_filter_type=topic_filter_type,
            topic_sys_flag=topic_sys_flag,
        )

    def encode_line(self) -> str:
        """J ``TopicConfig.encode()``: ``name read write perm filterType [attributesJSON]`` (the compressed
        registration)."""
        line = f"{self.topic_name} {self.read_queue_nums} {self.write_queue_nums} {self.perm} {self.topic_filter_type}"
        return f"{line} {dumps(self.attributes).decode()}" if self.attributes else line

    @classmethod
    def decode_line(cls, line: str) -> TopicConfig:
        """J ``TopicConfig.decode``: five space-separated fields, and 5.x's attributes JSON when present."""
        parts = line.split(" ")
        if len(parts) < 5:
            raise BodyDecodeError(f"topic config line {line[:120]!r} does not have 5 fields")
        name, read, write, perm, ftype = parts[:5]
        attributes: dict[str, str] = {}
        if len(parts) > 5:
            try:  # J ignores attributes that do not parse (a space inside one splits the JSON)
                raw = loads_lenient(" ".join(parts[5:]).encode())
                attributes = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
            except (BodyDecodeError, ValueError):
                attributes = {}
        try:
            return cls(
                topic_name=name,
                read_queue_nums=int(read),
                write_queue_nums=int(write),
                perm=int(perm),
                topic_filter_type=ftype,
                attributes=attributes,
            )
        except ValueError:
            raise BodyDecodeError(f"topic config line {line[:120]!r} has a bad number") from None


def _table_names(v: Any) -> Any:
    """``topicConfigTable`` values may leave out ``topicName``: take it from the key."""
    if isinstance(v, dict):
        return {
            k: ({**tc, "topicName": k} if isinstance(tc, dict) and "topicName" not in tc else tc) for k, tc in v.items()
        }
    return _none_is_empty_dict(v)


class TopicConfigSerializeWrapper(JsonBody):
    topic_config_table: dict[str, TopicConfig] = Field(
        default_factory=dict, validation_alias="topicConfigTable", serialization_alias="topicConfigTable"
    )
    data_version: DataVersion = Field(
        default_factory=DataVersion, validation_alias="dataVersion", serialization_alias="dataVersion"
    )

    _names = field_validator("topic_config_table", mode="before")(_table_names)

    @field_validator("data_version", mode="before")
    @classmethod
    def _dv(cls, v: Any) -> Any:
        return {} if v is None else v


class CreateTopicListRequestBody(JsonBody):
    """UPDATE_AND_CREATE_TOPIC_LIST (18) body: the topics to create or update at once."""

    topic_config_list: list[TopicConfig] = Field(
        default_factory=list, validation_alias="topicConfigList", serialization_alias="topicConfigList"
    )

    _none_list = field_validator("topic_config_list", mode="before")(_none_is_empty_list)


class RegisterBrokerBody(JsonBody):
    """REGISTER_BROKER body, plain JSON or (``compressed=True``) J's zlib form described at the top."""

    topic_config_serialize_wrapper: TopicConfigSerializeWrapper = Field(
        default_factory=TopicConfigSerializeWrapper,
        validation_alias="topicConfigSerializeWrapper",
        serialization_alias="topicConfigSerializeWrapper",
    )
    filter_server_list: list[str] = Field(
        default_factory=list, validation_alias="filterServerList", serialization_alias="filterServerList"
    )

    _none_list = field_validator("filter_server_list", mode="before")(_none_is_empty_list)

    @model_validator(mode="before")
    @classmethod
    def _none_wrapper(cls, v: Any) -> Any:
        if isinstance(v, dict) and v.get("topicConfigSerializeWrapper", 0) is None:
            return {k: x for k, x in v.items() if k != "topicConfigSerializeWrapper"}
        return v

    @property
    def topic_config_table(self) -> dict[str, TopicConfig]:
        return self.topic_config_serialize_wrapper.topic_config_table

    @property
    def data_version(self) -> DataVersion:
        return self.topic_config_serialize_wrapper.data_version

    def encode(self, compressed: bool = False) -> bytes:
        if not compressed:
            return dumps(self.to_json())
        wrapper = self.topic_config_serialize_wrapper
        out = bytearray()
        dv = wrapper.data_version.encode()
        out += _I32.pack(len(dv)) + dv
        out += _I32.pack(len(wrapper.topic_config_table))
        for tc in wrapper.topic_config_table.values():
            line = tc.encode_line().encode("utf-8")
            out += _I32.pack(len(line)) + line
        fs = dumps(self.filter_server_list)
        out += _I32.pack(len(fs)) + fs
        return zlib.compress(bytes(out), 9)

    @classmethod
    def decode(cls, body: BodyBytes, compressed: bool = False, *, max_inflated: int = MAX_INFLATED) -> Self:
        """An empty body is an empty registration (J's name server does the same)."""
        if not body:
            return cls()
        if not compressed:
            return cls.from_json(loads_lenient(body))
        if isinstance(body, str):
            raise BodyDecodeError("compressed RegisterBrokerBody must be bytes")
        r = _ChunkReader(_inflate(bytes(body), max_inflated))
        dv = DataVersion.from_json(loads_lenient(r.chunk("dataVersion")))
        count = r.int32("topic count")
        if count < 0:
            raise BodyDecodeError(f"compressed RegisterBrokerBody: negative topic count {count}")
        table: dict[str, TopicConfig] = {}
        for i in range(count):
            tc = TopicConfig.decode_line(_text(r.chunk(f"topic config #{i}")))
            table[tc.topic_name] = tc
        servers = loads_lenient(r.chunk("filterServerList"))
        if servers is None:
            servers = []
        if not (isinstance(servers, list) and all(isinstance(s, str) for s in servers)):
            raise BodyDecodeError("compressed RegisterBrokerBody: filterServerList is not a list of strings")
        wrapper = TopicConfigSerializeWrapper(topic_config_table=table, data_version=dv)
        return cls(topic_config_serialize_wrapper=wrapper, filter_server_list=servers)


def _inflate(body: bytes, limit: int) -> bytes:
    d = zlib.decompressobj()
    try:
        out = d.decompress(body, limit)
    except zlib.error as exc:
        raise BodyDecodeError(f"compressed RegisterBrokerBody is not a zlib stream: {exc}") from None
    if d.unconsumed_tail:
        raise BodyDecodeError(f"compressed RegisterBrokerBody inflates to more than {limit} bytes")
    return out


class _ChunkReader:
    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def int32(self, what: str) -> int:
        if self._pos + 4 > len(self._data):
            raise BodyDecodeError(f"compressed RegisterBrokerBody truncated reading {what} at byte {self._pos}")
        (n,) = _I32.unpack_from(self._data, self._pos)
        self._pos += 4
        return int(n)

    def chunk(self, what: str) -> bytes:
        n = self.int32(f"{what} length")
        if n < 0 or self._pos + n > len(self._data):
            raise BodyDecodeError(f"compressed RegisterBrokerBody: {what} length {n} at byte {self._pos - 4} is bad")
        out = self._data[self._pos : self._pos + n]
        self._pos += n
        return out
