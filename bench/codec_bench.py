"""Codec benchmark: encode + decode per second of a SEND_MESSAGE_V2 request as a whole frame (typed header with
properties, 1 KiB body) with JSON vs ROCKETMQ vs msgpack headers, of a 1 KiB stored message record, and of the hot
typed headers alone. Pure CPU, one core, no sockets; about 1 s per measurement (under 30 s in all).

    .venv/bin/python bench/codec_bench.py [--secs 1]

What each row measures:

| row                         | encode                                          | decode                                           |
|-----------------------------|-------------------------------------------------|--------------------------------------------------|
| SEND_V2 frame, <type>       | header.to_v2_ext_fields() + encode_frame()      | FrameDecoder.feed/next_frame + from_v2_ext_fields|
| 1 KiB message record        | protocol.record.encode_record()                 | protocol.record_decode.decode_record()           |
| header <name>               | to_ext_fields() (to_v2_ext_fields() for V1)     | from_ext_fields() (from_v2_ext_fields() for V1)  |
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from protocol.codes import RequestCode, SerializeType
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder, encode_frame
from protocol.headers import (
    PullMessageRequestHeader,
    PullMessageResponseHeader,
    SendMessageRequestHeader,
    SendMessageRequestHeaderV2,
    SendMessageResponseHeader,
)
from protocol.message_properties import encode_properties
from protocol.record import encode_record
from protocol.record_decode import decode_record
from runtime.msg_id import create_uniq_id

try:
    from bench._util import table
except ImportError:  # run as a script
    from _util import table  # type: ignore[no-redef]


def rate(fn: Callable[[], object], secs: float) -> float:
    """Calls per second of ``fn``, in batches of 200 for at least ``secs`` seconds."""
    n = 0
    start = time.perf_counter()
    end = start + secs
    while time.perf_counter() < end:
        for _ in range(200):
            fn()
        n += 200
    return n / (time.perf_counter() - start)


def row(what: str, size: str, enc: Callable[[], object], dec: Callable[[], object], secs: float) -> tuple[str, ...]:
    e, d = rate(enc, secs), rate(dec, secs)
    return what, size, f"{e:,.0f}", f"{d:,.0f}", f"{1 / (1 / e + 1 / d):,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--secs", type=float, default=1.0, help="seconds per measurement (default 1)")
    a = ap.parse_args()
    props = encode_properties({"TAGS": "TagA", "KEYS": "k1 k2", "UNIQ_KEY": create_uniq_id(), "WAIT": "true"})
    header = SendMessageRequestHeader(
        "PID_bench", "BenchTopic", "TBW102", 4, 1, 0, int(time.time() * 1000), 0, props, 0, False, False, 16
    )
    body = b"x" * 1024
    rows: list[tuple[str, ...]] = []
    frame_rates: dict[str, float] = {}
    for st in (SerializeType.JSON, SerializeType.ROCKETMQ, SerializeType.MSGPACK):

        def enc(st: SerializeType = st) -> bytes:
            return encode_frame(
                RemotingCommand(
                    RequestCode.SEND_MESSAGE_V2,
                    opaque=7,
                    ext_fields=header.to_v2_ext_fields(),
                    body=body,
                    serialize_type=st,
                )
            )

        wire = enc()

        def dec(wire: bytes = wire) -> SendMessageRequestHeader:
            d = FrameDecoder()
            d.feed(wire)
            cmd = d.next_frame()
            assert cmd is not None
            return SendMessageRequestHeader.from_v2_ext_fields(cmd.ext_fields)

        assert dec() == header
        r = row(f"SEND_V2 frame, {st.name} header", f"{len(wire) - len(body) - 8} B", enc, dec, a.secs)
        frame_rates[st.name] = float(r[4].replace(",", ""))
        rows.append(r)

    def enc_rec() -> bytes | bytearray:
        return encode_record(
            topic="BenchTopic",
            body=body,
            properties=props,
            born_host=("127.0.0.1", 5555),
            store_host=("127.0.0.1", 10911),
        )

    rec = enc_rec()
    rows.append(row("1 KiB message record", f"{len(rec)} B", enc_rec, lambda: decode_record(rec), a.secs))

    v2 = header.to_v2()
    pull = PullMessageRequestHeader("CID", "BenchTopic", 1, 100, 32, 6, -1, 15000, 1795369865475, "*")
    pull_resp = PullMessageResponseHeader(0, 132, 0, 1000)
    send_resp = SendMessageResponseHeader("7F00000100002A9F0000000000001092", 1, 12345)
    hot: list[tuple[str, Callable[[], dict[str, str]], Callable[[dict[str, str]], object]]] = [
        ("SEND_V2 request", v2.to_ext_fields, SendMessageRequestHeaderV2.from_ext_fields),
        ("SEND_V2 wire <-> V1 object", header.to_v2_ext_fields, SendMessageRequestHeader.from_v2_ext_fields),
        ("PULL request", pull.to_ext_fields, PullMessageRequestHeader.from_ext_fields),
        ("PULL response", pull_resp.to_ext_fields, PullMessageResponseHeader.from_ext_fields),
        ("SEND response", send_resp.to_ext_fields, SendMessageResponseHeader.from_ext_fields),
    ]
    for name, to_fields, from_fields in hot:
        fields = to_fields()
        rows.append(
            row(
                f"header {name}",
                f"{len(fields)} fields",
                to_fields,
                lambda from_fields=from_fields, fields=fields: from_fields(fields),  # type: ignore[misc]
                a.secs,
            )
        )
    assert SendMessageRequestHeaderV2.from_ext_fields(header.to_v2_ext_fields()) == header.to_v2()
    table(rows, ("what", "header/record size", "encode/s", "decode/s", "round trip/s"))
    best = max(frame_rates, key=frame_rates.__getitem__)
    others = ", ".join(f"{k} {frame_rates[best] / v:.2f}x" for k, v in frame_rates.items() if k != best)
    print(f"\nfastest header type for a SEND_V2 frame round trip: {best} (vs {others})")


if __name__ == "__main__":
    main()
