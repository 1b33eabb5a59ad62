"""Every frame captured from the official C++ and ali-ons clients decodes, re-encodes to the same command, and the
replies we build for the requests among them are what those clients can read (JSON, top byte 0, string values)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from protocol.codes import ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder, encode_frame
from protocol.headers import (
    GetConsumerListByGroupRequestHeader,
    GetRouteInfoRequestHeader,
    PullMessageRequestHeader,
    QueryConsumerOffsetRequestHeader,
    QueueRequestHeader,
    SendMessageRequestHeader,
    SendMessageRequestHeaderV2,
    UnregisterClientRequestHeader,
    UpdateConsumerOffsetRequestHeader,
)
from tests.conftest import GOLDEN_DIR

FRAMES = sorted(GOLDEN_DIR.glob("*.bin"))
HEADERS = {
    10: SendMessageRequestHeader,
    310: SendMessageRequestHeaderV2,
    11: PullMessageRequestHeader,
    14: QueryConsumerOffsetRequestHeader,
    15: UpdateConsumerOffsetRequestHeader,
    30: QueueRequestHeader,
    35: UnregisterClientRequestHeader,
    38: GetConsumerListByGroupRequestHeader,
    105: GetRouteInfoRequestHeader,
}


def decode(data: bytes) -> RemotingCommand:
    d = FrameDecoder()
    d.feed(data)
    cmd = d.next_frame()
    assert cmd is not None and d.buffered == 0
    return cmd


def test_the_golden_set_is_there() -> None:
    assert len(FRAMES) >= 99


@pytest.mark.parametrize("path", FRAMES, ids=lambda p: p.stem)
def test_frame_decodes_and_reencodes_to_the_same_command(path: Path) -> None:
    raw = path.read_bytes()
    cmd = decode(raw)
    view = json.loads(path.with_suffix(".json").read_text())
    assert cmd.code == view["header"]["code"]
    assert cmd.opaque == view["header"]["opaque"]
    assert cmd.flag == view["header"]["flag"]
    assert cmd.body == bytes.fromhex(view["body_hex"])
    again = decode(encode_frame(cmd))
    assert again == cmd
    for value in cmd.ext_fields.values():
        assert isinstance(value, str)


@pytest.mark.parametrize("path", [p for p in FRAMES if "_c2s_" in p.name], ids=lambda p: p.stem)
def test_reply_to_a_golden_request_is_json_with_string_values(path: Path) -> None:
    req = decode(path.read_bytes())
    header_cls = HEADERS.get(req.code)
    if header_cls is not None:
        header_cls.from_ext_fields(req.ext_fields)  # every typed header reads what real clients send
    reply = req.make_response(ResponseCode.SUCCESS, None, {"offset": "12", "queueId": "3"})
    wire = encode_frame(reply)
    (_length, word) = struct.unpack_from(">iI", wire, 0)
    assert word >> 24 == SerializeType.JSON
    header = json.loads(wire[8 : 8 + (word & 0xFFFFFF)])
    assert header["opaque"] == req.opaque
    assert header["flag"] & 1
    assert all(isinstance(v, str) for v in header["extFields"].values())


def test_cpp_numeric_and_boolean_ext_values_become_text() -> None:
    send = decode((GOLDEN_DIR / "cpp_producer_003_br_c2s_SEND_MESSAGE.bin").read_bytes())
    h = SendMessageRequestHeader.from_ext_fields(send.ext_fields)
    assert send.ext_fields["queueId"] == "0" and h.queue_id == 0
    assert h.unit_mode is False and h.batch is False
    v2 = decode((GOLDEN_DIR / "alions_producer_003_br_c2s_SEND_MESSAGE_V2.bin").read_bytes())
    assert v2.ext_fields["k"] in ("false", "true")
    assert SendMessageRequestHeaderV2.from_ext_fields(v2.ext_fields).to_v1().topic
