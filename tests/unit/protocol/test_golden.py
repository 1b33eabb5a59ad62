"""Every frame captured from the official C++ and ali-ons clients (``../shared/reference/golden``) decodes to the
command its decoded view describes and re-encodes, in every header type, to the same command; every typed header and
modelled body in the set parses; and the replies we build for the requests among them are what those clients can read
(JSON, top byte 0, string values)."""

from __future__ import annotations

import json
import re
import struct
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from protocol.bodies import (
    ConsumeFromWhere,
    ConsumerListBody,
    ConsumeType,
    HeartbeatData,
    MessageModel,
    MessageQueue,
    TopicRouteData,
    loads_lenient,
)
from protocol.codes import LanguageCode, RequestCode, ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder, encode_frame
from protocol.headers import (
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    OffsetResponseHeader,
    PullMessageRequestHeader,
    PullMessageResponseHeader,
    SendMessageRequestHeader,
    SendMessageRequestHeaderV2,
    SendMessageResponseHeader,
)

GOLDEN_DIR = Path(__file__).resolve().parents[3].parent / "shared/reference/golden"
FRAMES = sorted(GOLDEN_DIR.glob("*.bin"))
REQUESTS = [p for p in FRAMES if "_RESP" not in p.name]
RESPONSES = [p for p in FRAMES if "_RESP" in p.name]


def _id(p: Path) -> str:
    return p.stem


def decode(data: bytes) -> RemotingCommand:
    d = FrameDecoder()
    d.feed(data)
    cmd = d.next_frame()
    assert cmd is not None and d.buffered == 0
    return cmd


def view(path: Path) -> dict[str, Any]:
    return json.loads(path.with_suffix(".json").read_text())  # type: ignore[no-any-return]


def _text(value: Any) -> str:
    """How a JSON extFields value reads as text (what J's fastjson does with numbers and booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


_NAME = re.compile(r"(?P<client>.+)_\d{3}_(?P<role>ns|br)_(?:c2s|s2c)_(?P<what>.+)")


def _exchange(p: Path) -> tuple[str, str, int]:
    """(capture, connection role, opaque): a reply has the key of the request it answers."""
    m = _NAME.fullmatch(p.stem)
    assert m is not None, p.stem
    return m["client"], m["role"], view(p)["header"]["opaque"]


@cache
def request_code_by_reply() -> dict[str, int]:
    """Reply file stem → the code of the request it answers (when that request was kept in the set)."""
    requests = {_exchange(p): view(p)["header"]["code"] for p in REQUESTS}
    return {p.stem: requests[_exchange(p)] for p in RESPONSES if _exchange(p) in requests}


def test_the_golden_set_is_there() -> None:
    assert GOLDEN_DIR.is_dir(), f"golden frames not found at {GOLDEN_DIR} (shared/ must sit beside the repository)"
    assert len(FRAMES) >= 99
    replies = request_code_by_reply()
    assert len(replies) >= len(RESPONSES) - 2  # a reply whose request was not kept cannot be paired
    assert {RequestCode.PULL_MESSAGE, RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2} <= set(replies.values())


@pytest.mark.parametrize("path", FRAMES, ids=_id)
def test_frame_decodes_to_its_view(path: Path) -> None:
    raw = path.read_bytes()
    v = view(path)
    assert raw.hex() == v["frame_hex"] and v["serialize_type"] == 0
    cmd = decode(raw)
    h = v["header"]
    assert cmd.serialize_type == SerializeType.JSON
    assert (cmd.code, cmd.opaque, cmd.flag, cmd.version) == (h["code"], h["opaque"], h["flag"], h["version"])
    assert cmd.language == LanguageCode[h["language"]]
    assert cmd.remark == h.get("remark")
    assert cmd.ext_fields == {k: _text(x) for k, x in (h.get("extFields") or {}).items()}
    assert cmd.body == bytes.fromhex(v["body_hex"])


@pytest.mark.parametrize("path", FRAMES, ids=_id)
@pytest.mark.parametrize("stype", list(SerializeType), ids=lambda s: s.name)
def test_frame_reencodes_to_the_same_command(path: Path, stype: SerializeType) -> None:
    cmd = decode(path.read_bytes())
    cmd.serialize_type = stype
    again = decode(encode_frame(cmd))
    if stype == SerializeType.ROCKETMQ and cmd.remark == "":
        cmd.remark = None  # the binary header has one encoding (length 0) for "" and null, as in J
    assert again == cmd
    assert all(isinstance(x, str) for x in again.ext_fields.values())


@pytest.mark.parametrize("path", [p for p in REQUESTS if decode(p.read_bytes()).code in REQUEST_HEADERS], ids=_id)
def test_typed_request_headers_read_what_the_clients_send(path: Path) -> None:
    """Client requests and the capture broker's own requests to clients (NOTIFY, GET_CONSUMER_RUNNING_INFO)."""
    cmd = decode(path.read_bytes())
    cls = REQUEST_HEADERS[cmd.code]
    header = cls.from_ext_fields(cmd.ext_fields)
    # what we would write back carries the same values for the fields we know
    again = header.to_ext_fields()
    for key, value in again.items():
        if key in cmd.ext_fields:
            assert type(header).from_ext_fields({**cmd.ext_fields, key: value}) == header


def _typed_replies() -> list[Path]:
    out = []
    for p in RESPONSES:
        code = request_code_by_reply().get(p.stem)
        if code is not None and code in RESPONSE_HEADERS and decode(p.read_bytes()).ext_fields:
            out.append(p)
    return out


TYPED_REPLIES = _typed_replies()


@pytest.mark.parametrize("path", TYPED_REPLIES, ids=_id)
def test_typed_response_headers_read_the_replies(path: Path) -> None:
    cmd = decode(path.read_bytes())
    header = RESPONSE_HEADERS[request_code_by_reply()[path.stem]].from_ext_fields(cmd.ext_fields)
    written = header.to_ext_fields()
    assert {k: v for k, v in written.items() if k in cmd.ext_fields} == {
        k: v for k, v in cmd.ext_fields.items() if k in written
    }


def test_pull_send_and_offset_replies_are_among_the_typed_ones() -> None:
    codes = {request_code_by_reply()[p.stem] for p in TYPED_REPLIES}
    assert {RequestCode.PULL_MESSAGE, RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2} <= codes
    assert RequestCode.GET_MAX_OFFSET in codes


def _bodies() -> list[tuple[Path, str]]:
    out = []
    for p in FRAMES:
        cmd = decode(p.read_bytes())
        if not cmd.body:
            continue
        code = cmd.code if "_RESP" not in p.name else request_code_by_reply().get(p.stem)
        kind = {
            RequestCode.HEART_BEAT: "heartbeat",
            RequestCode.GET_ROUTEINFO_BY_TOPIC: "route",
            RequestCode.GET_CONSUMER_LIST_BY_GROUP: "consumer_list",
            RequestCode.GET_CONSUMER_RUNNING_INFO: "running_info",
        }.get(code or -1)
        if kind is not None:
            out.append((p, kind))
    return out


BODIES = _bodies()


def test_every_kind_of_json_body_is_in_the_set() -> None:
    kinds = {k for _p, k in BODIES}
    assert kinds == {"heartbeat", "route", "consumer_list", "running_info"}
    assert {p.stem.split("_")[0] for p, k in BODIES if k == "heartbeat"} == {"cpp", "alions"}


@pytest.mark.parametrize(("path", "kind"), BODIES, ids=lambda x: x.stem if isinstance(x, Path) else x)
def test_golden_bodies_parse(path: Path, kind: str) -> None:
    cmd = decode(path.read_bytes())
    if kind == "heartbeat":
        hb = HeartbeatData.decode(cmd.body)
        assert hb.client_id
        assert HeartbeatData.decode(hb.encode()) == hb
        for c in hb.consumer_data_set:
            assert c.consume_type == ConsumeType.CONSUME_PASSIVELY and c.message_model == MessageModel.CLUSTERING
            assert c.consume_from_where == ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
            assert any(s.topic == "TopicTest" and s.tags_set == ["TagA", "TagB"] for s in c.subscription_data_set)
        assert hb.consumer_data_set or hb.producer_data_set
    elif kind == "route":
        route = TopicRouteData.decode(cmd.body)
        assert route.broker_datas[0].master_addr == "127.0.0.1:10911"
        assert route.queue_datas[0].perm == 6 and route.queue_datas[0].write_queue_nums == 4
        assert TopicRouteData.decode(route.encode()) == route
    elif kind == "consumer_list":
        ids = ConsumerListBody.decode(cmd.body).consumer_id_list
        assert len(ids) == 1 and "@" in ids[0]
    else:
        # C++'s ConsumerRunningInfo: pretty-printed, object keys, 64-bit values as strings. Not JSON, but readable.
        with pytest.raises(ValueError):
            json.loads(cmd.body)
        info = loads_lenient(cmd.body, object_key=MessageQueue.from_json)
        assert MessageQueue("TopicTest", "broker-a", 0) in info["mqTable"]
        assert info["mqTable"][MessageQueue("TopicTest", "broker-a", 1)]["commitOffset"] == "18446744073709551615"
        assert info["properties"]["PROP_CONSUME_TYPE"] == "CONSUME_PASSIVELY"


@pytest.mark.parametrize("path", [p for p in FRAMES if "_c2s_" in p.name and "_RESP" not in p.name], ids=_id)
def test_reply_to_a_golden_request_is_json_with_string_values(path: Path) -> None:
    req = decode(path.read_bytes())
    ext = {"offset": "12", "queueId": "3"}
    if req.code == RequestCode.PULL_MESSAGE:
        ext = PullMessageResponseHeader(0, 12, 0, 100).to_ext_fields()
    elif req.code in (RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2):
        ext = SendMessageResponseHeader("7F00000100002A9F0000000000001092", 3, 12).to_ext_fields()
    elif req.code in (RequestCode.QUERY_CONSUMER_OFFSET, RequestCode.GET_MAX_OFFSET):
        ext = OffsetResponseHeader(12).to_ext_fields()
    reply = req.make_response(ResponseCode.SUCCESS, None, ext)
    wire = encode_frame(reply)
    (length, word) = struct.unpack_from(">iI", wire, 0)
    assert length == len(wire) - 4
    assert word >> 24 == SerializeType.JSON  # C++ and ali-ons read the whole word as the header length
    header = json.loads(wire[8 : 8 + (word & 0xFFFFFF)])
    assert header["opaque"] == req.opaque and header["code"] == 0
    assert header["flag"] & 1 and not header["flag"] & 2
    assert header["extFields"] == ext
    assert all(isinstance(v, str) for v in header["extFields"].values())


def test_cpp_numeric_and_boolean_ext_values_become_text() -> None:
    send = decode((GOLDEN_DIR / "cpp_producer_003_br_c2s_SEND_MESSAGE.bin").read_bytes())
    h = SendMessageRequestHeader.from_ext_fields(send.ext_fields)
    assert send.ext_fields["queueId"] == "0" and h.queue_id == 0
    assert h.unit_mode is False and h.batch is False  # C++ writes "0"
    assert h.properties is not None and "UNIQ_KEY\x01" in h.properties
    v2 = decode((GOLDEN_DIR / "alions_producer_003_br_c2s_SEND_MESSAGE_V2.bin").read_bytes())
    assert v2.ext_fields["k"] == "false" and v2.ext_fields["g"] == "1795369922602"  # JSON false / number
    h2 = SendMessageRequestHeaderV2.from_ext_fields(v2.ext_fields)
    assert h2.to_v1() == SendMessageRequestHeader.from_v2_ext_fields(v2.ext_fields)
    assert (h2.b, h2.e, h2.k, h2.j) == ("TopicTest", 0, False, 0)
    pull = decode((GOLDEN_DIR / "alions_consumer_019_br_c2s_PULL_MESSAGE.bin").read_bytes())
    p = PullMessageRequestHeader.from_ext_fields(pull.ext_fields)
    assert (p.commit_offset, p.sys_flag, p.sub_version, p.expression_type) == (-1, 6, 1795369929756, None)
