"""Codec benchmark: encode + decode per second of a SEND_MESSAGE_V2 frame (header with properties, 1 KiB body) in
JSON vs msgpack vs ROCKETMQ headers, and of a 1 KiB stored message record. Pure CPU, no sockets.

    .venv/bin/python bench/codec_bench.py [--secs 2]
"""

from __future__ import annotations

import argparse
import time

from protocol.codes import RequestCode, SerializeType
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder, encode_frame
from protocol.headers import SendMessageRequestHeader, SendMessageRequestHeaderV2
from protocol.message import create_uniq_id, decode_record, encode_properties, encode_record

try:
    from bench._util import table
except ImportError:  # run as a script
    from _util import table  # type: ignore[no-redef]


def rate(fn: object, secs: float) -> float:
    n = 0
    end = time.perf_counter() + secs
    start = time.perf_counter()
    while time.perf_counter() < end:
        for _ in range(200):
            fn()  # type: ignore[operator]
        n += 200
    return n / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--secs", type=float, default=2.0)
    a = ap.parse_args()
    props = encode_properties({"TAGS": "TagA", "KEYS": "k1 k2", "UNIQ_KEY": create_uniq_id(), "WAIT": "true"})
    header = SendMessageRequestHeader("PID_bench", "BenchTopic", "TBW102", 4, 1, 0, int(time.time() * 1000), 0, props)
    body = b"x" * 1024
    rows = []
    for st in SerializeType:
        cmd = RemotingCommand(
            RequestCode.SEND_MESSAGE_V2,
            opaque=7,
            ext_fields=header.to_v2().to_ext_fields(),
            body=body,
            serialize_type=st,
        )
        wire = encode_frame(cmd)

        def enc(cmd: RemotingCommand = cmd) -> bytes:
            return encode_frame(cmd)

        def dec(wire: bytes = wire) -> object:
            d = FrameDecoder()
            d.feed(wire)
            return SendMessageRequestHeaderV2.from_ext_fields(d.next_frame().ext_fields)  # type: ignore[union-attr]

        e, d = rate(enc, a.secs), rate(dec, a.secs)
        rows.append(
            (
                f"SEND_V2 frame, {st.name} header",
                f"{len(wire) - len(body)} B",
                f"{e:,.0f}",
                f"{d:,.0f}",
                f"{1 / (1 / e + 1 / d):,.0f}",
            )
        )
    rec = encode_record(
        topic="BenchTopic", body=body, properties=props, born_host=("127.0.0.1", 5555), store_host=("127.0.0.1", 10911)
    )

    def enc_rec() -> object:
        return encode_record(
            topic="BenchTopic",
            body=body,
            properties=props,
            born_host=("127.0.0.1", 5555),
            store_host=("127.0.0.1", 10911),
        )

    def dec_rec() -> object:
        return decode_record(rec)

    e, d = rate(enc_rec, a.secs), rate(dec_rec, a.secs)
    rows.append(("1 KiB message record", f"{len(rec)} B", f"{e:,.0f}", f"{d:,.0f}", f"{1 / (1 / e + 1 / d):,.0f}"))
    table(rows, ("what", "header/record size", "encode/s", "decode/s", "round trip/s"))


if __name__ == "__main__":
    main()
