"""Name-server request/response bodies on the wire ↔ the route table's plain types. The only namesrv module that
knows body formats; handlers call ``decode_*``/``encode_*`` and never touch JSON themselves.

This is a local stand-in until ``protocol/bodies.py`` lands: when it does, only this module switches to its models
(TopicRouteData, RegisterBrokerBody, ClusterInfo, TopicList, KVTable, DataVersion, TopicConfig) — nothing else in
namesrv imports pydantic body models. Formats (reference/protocol.md §d, J 4.9.7):

* RegisterBrokerBody, plain: ``{"topicConfigSerializeWrapper":{"topicConfigTable":{name:TopicConfig},
  "dataVersion":{"timestamp":ms,"counter":n}},"filterServerList":[...]}``. Extra keys (J 5.x adds some) ignored.
* RegisterBrokerBody, compressed (header ``compressed=true``): one zlib stream of big-endian int32-length-prefixed
  parts: ``len + DataVersion JSON``, ``int32 topicCount``, per topic ``len + TopicConfig.encode()`` (the
  space-separated ``name read write perm filterType``; topicSysFlag and order are not carried), then
  ``len + filterServerList JSON``.
* TopicRouteData: standard JSON, broker-id keys always quoted (``{"0":"ip:port"}``), which J ≥ 4.9.4, C++ 1.2.4
  and ali-ons all parse (protocol.md trap 8). J's fastjson default (unquoted ``{0:...}``) is never produced.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from namesrv.route_table import BrokerData, ClusterInfo, DataVersion, TopicConfig, TopicRoute

MAX_INFLATED = 64 * 1024 * 1024  # a compressed registration may not inflate beyond this (zip-bomb guard)
_I32 = struct.Struct(">i")

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class BodyError(ValueError):
    """A body that cannot be decoded; the message says what was wrong."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _DataVersionModel(_Lenient):
    timestamp: int = 0
    counter: int = 0


class _TopicConfigModel(_Lenient):
    topicName: str | None = None
    readQueueNums: int = 16
    writeQueueNums: int = 16
    perm: int = 6
    topicFilterType: str = "SINGLE_TAG"
    topicSysFlag: int = 0
    order: bool = False


class _WrapperModel(_Lenient):
    topicConfigTable: dict[str, _TopicConfigModel] | None = None
    dataVersion: _DataVersionModel | None = None


class _RegisterBodyModel(_Lenient):
    topicConfigSerializeWrapper: _WrapperModel = Field(default_factory=_WrapperModel)
    filterServerList: list[str] | None = None


@dataclass(frozen=True, slots=True)
class Registration:
    """A decoded RegisterBrokerBody. ``data_version=None``: the broker sent none (always counts as changed)."""

    data_version: DataVersion | None
    topic_configs: dict[str, TopicConfig]
    filter_servers: list[str] | None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "body"
    return f"{where}: {err['msg']}"


def _data_version(model: _DataVersionModel | None) -> DataVersion | None:
    return DataVersion(model.timestamp, model.counter) if model is not None else None


def _topic_config(name: str, m: _TopicConfigModel) -> TopicConfig:
    return TopicConfig(
        m.topicName or name, m.readQueueNums, m.writeQueueNums, m.perm, m.topicFilterType, m.topicSysFlag, m.order
    )


def decode_register_body(body: bytes, compressed: bool) -> Registration:
    """REGISTER_BROKER body → Registration; raises BodyError. An empty body is an empty registration (J)."""
    if not body:
        return Registration(data_version=None, topic_configs={}, filter_servers=None)
    if compressed:
        return _decode_compressed(body)
    try:
        model = _RegisterBodyModel.model_validate_json(body)
    except ValidationError as exc:
        raise BodyError(f"RegisterBrokerBody is not valid: {_first_error(exc)}") from None
    wrapper = model.topicConfigSerializeWrapper
    table = wrapper.topicConfigTable or {}
    return Registration(
        data_version=_data_version(wrapper.dataVersion),
        topic_configs={name: _topic_config(name, tc) for name, tc in table.items()},
        filter_servers=model.filterServerList,
    )


def _inflate(body: bytes) -> bytes:
    d = zlib.decompressobj()
    try:
        out = d.decompress(body, MAX_INFLATED)
    except zlib.error as exc:
        raise BodyError(f"compressed RegisterBrokerBody is not a zlib stream: {exc}") from None
    if d.unconsumed_tail:
        raise BodyError(f"compressed RegisterBrokerBody inflates to more than {MAX_INFLATED} bytes")
    return out


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def int32(self, what: str) -> int:
        if self.pos + 4 > len(self.data):
            raise BodyError(f"compressed RegisterBrokerBody truncated reading {what} at byte {self.pos}")
        (n,) = _I32.unpack_from(self.data, self.pos)
        self.pos += 4
        return int(n)

    def chunk(self, what: str) -> bytes:
        n = self.int32(f"{what} length")
        if n < 0 or self.pos + n > len(self.data):
            raise BodyError(f"compressed RegisterBrokerBody: {what} length {n} at byte {self.pos - 4} is out of range")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


def _decode_compressed(body: bytes) -> Registration:
    r = _Reader(_inflate(body))
    try:
        dv = _DataVersionModel.model_validate_json(r.chunk("dataVersion"))
    except ValidationError as exc:
        raise BodyError(f"compressed RegisterBrokerBody: bad dataVersion: {_first_error(exc)}") from None
    count = r.int32("topic count")
    if count < 0:
        raise BodyError(f"compressed RegisterBrokerBody: negative topic count {count}")
    topics: dict[str, TopicConfig] = {}
    for i in range(count):
        tc = _decode_topic_line(r.chunk(f"topic config #{i}"), i)
        topics[tc.topic_name] = tc
    try:
        servers = json.loads(r.chunk("filterServerList"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BodyError(f"compressed RegisterBrokerBody: filterServerList is not JSON: {exc}") from None
    if servers is not None and not (isinstance(servers, list) and all(isinstance(s, str) for s in servers)):
        raise BodyError("compressed RegisterBrokerBody: filterServerList is not a list of strings")
    return Registration(data_version=_data_version(dv), topic_configs=topics, filter_servers=servers)


def _decode_topic_line(raw: bytes, index: int) -> TopicConfig:
    """J ``TopicConfig.decode``: exactly ``name read write perm filterType`` separated by single spaces."""
    parts = raw.decode("utf-8", "replace").split(" ")
    if len(parts) != 5:
        raise BodyError(f"compressed RegisterBrokerBody: topic config #{index} {raw[:80]!r} does not have 5 fields")
    name, read, write, perm, ftype = parts
    try:
        return TopicConfig(name, int(read), int(write), int(perm), ftype)
    except ValueError:
        raise BodyError(f"compressed RegisterBrokerBody: topic config #{index} {raw[:80]!r} has a bad number") from None


def encode_register_body(
    topic_configs: dict[str, TopicConfig],
    data_version: DataVersion,
    filter_servers: list[str] | None = None,
    *,
    compressed: bool = False,
) -> bytes:
    """The broker side of REGISTER_BROKER (used by tests here; the broker has its own once protocol.bodies lands)."""
    servers = filter_servers or []
    dv = {"counter": data_version.counter, "timestamp": data_version.timestamp}
    if not compressed:
        table = {name: _topic_config_json(tc) for name, tc in topic_configs.items()}
        doc = {
            "topicConfigSerializeWrapper": {"topicConfigTable": table, "dataVersion": dv},
            "filterServerList": servers,
        }
        return _dumps(doc).encode()
    dv_json = _dumps(dv).encode()
    out = bytearray(_I32.pack(len(dv_json)) + dv_json)
    out += _I32.pack(len(topic_configs))
    for tc in topic_configs.values():
        line = f"{tc.topic_name} {tc.read_queue_nums} {tc.write_queue_nums} {tc.perm} {tc.topic_filter_type}".encode()
        out += _I32.pack(len(line)) + line
    fs = _dumps(servers).encode()
    out += _I32.pack(len(fs)) + fs
    return zlib.compress(bytes(out), 9)


def _topic_config_json(tc: TopicConfig) -> dict[str, Any]:
    return {
        "topicName": tc.topic_name,
        "readQueueNums": tc.read_queue_nums,
        "writeQueueNums": tc.write_queue_nums,
        "perm": tc.perm,
        "topicFilterType": tc.topic_filter_type,
        "topicSysFlag": tc.topic_sys_flag,
        "order": tc.order,
    }


def decode_data_version(body: bytes) -> DataVersion:
    """QUERY_DATA_VERSION body → DataVersion; raises BodyError."""
    if not body:
        raise BodyError("DataVersion body is empty")
    try:
        m = _DataVersionModel.model_validate_json(body)
    except ValidationError as exc:
        raise BodyError(f"DataVersion is not valid: {_first_error(exc)}") from None
    return DataVersion(m.timestamp, m.counter)


def encode_data_version(dv: DataVersion) -> bytes:
    return _dumps({"counter": dv.counter, "timestamp": dv.timestamp}).encode()


def _broker_data_json(bd: BrokerData) -> dict[str, Any]:
    return {
        "cluster": bd.cluster,
        "brokerName": bd.broker_name,
        "brokerAddrs": {str(i): addr for i, addr in bd.broker_addrs.items()},
    }


def encode_route(route: TopicRoute, order_topic_conf: str | None) -> bytes:
    """TopicRouteData in the key order of the captured replies both C++ and ali-ons accepted."""
    doc = {
        "orderTopicConf": order_topic_conf,
        "queueDatas": [
            {
                "brokerName": q.broker_name,
                "readQueueNums": q.read_queue_nums,
                "writeQueueNums": q.write_queue_nums,
                "perm": q.perm,
                "topicSysFlag": q.topic_sys_flag,
            }
            for q in route.queue_datas
        ],
        "brokerDatas": [_broker_data_json(bd) for bd in route.broker_datas],
        "filterServerTable": route.filter_server_table,
    }
    return _dumps(doc).encode()


def encode_cluster_info(info: ClusterInfo) -> bytes:
    return _dumps(
        {
            "brokerAddrTable": {name: _broker_data_json(bd) for name, bd in info.broker_addr_table.items()},
            "clusterAddrTable": info.cluster_addr_table,
        }
    ).encode()


def encode_topic_list(topics: list[str], broker_addr: str | None = None) -> bytes:
    """TopicList as fastjson writes it: ``{"brokerAddr":...,"topicList":[...]}``, brokerAddr left out when null."""
    doc: dict[str, Any] = {} if broker_addr is None else {"brokerAddr": broker_addr}
    doc["topicList"] = topics
    return _dumps(doc).encode()


def encode_kv_table(table: dict[str, str]) -> bytes:
    return _dumps({"table": table}).encode()
