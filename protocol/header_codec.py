"""Header encoders/decoders for the three serialize types (the top byte of the frame's second word).

JSON (type 0) — a UTF-8 object, as J writes it with fastjson (keys sorted, nulls left out)::

    {"code":int, "extFields":{str:str}, "flag":int, "language":"JAVA", "opaque":int,
     "remark":str, "serializeTypeCurrentRPC":"JSON", "version":int}

ROCKETMQ binary (type 1), big-endian (``RocketMQSerializable``)::

    +--------+---------+--------+----------+------+--------------------+--------------------------------------+
    | int16  | int8    | int16  | int32    | int32| int32 len + UTF-8  | int32 len + { int16 klen, key,       |
    | code   | language| version| opaque   | flag | remark             |   int32 vlen, value }*   (ext fields) |
    +--------+---------+--------+----------+------+--------------------+--------------------------------------+

msgpack (type 2, this project's extension) — the JSON object's fields, msgpack-encoded, with ``language`` as the
ordinal. Only our native client sends it; a server answers in the request's type, so official clients never see it.
Negotiated per connection: a client that would send msgpack sends JSON with the remark ``MSGPACK_OFFER_FIELD`` (the
ask; request remarks are ignored by RocketMQ servers and not signed by ACL) until a reply on that connection carries
the ext field ``MSGPACK_OFFER_FIELD`` (the offer), then msgpack. A rocketq server offers in its reply to the first
ask on a connection; any other RocketMQ never offers, so it only ever gets JSON, and clients that never ask never see
the field.

Decoders accept ext-field values that are numbers or booleans and store their text (``true``/``false`` for
booleans, decimal for numbers), because the C++ and ali-ons clients send them that way.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from json.encoder import encode_basestring as _json_str
from typing import Any, Final

import msgpack

from protocol.codes import LANGUAGE_BY_NAME, LanguageCode, SerializeType, language_from_name
from protocol.command import RemotingCommand
from protocol.errors import LocalProtocolError, MalformedFrameError

BIN_FIXED: Final = struct.Struct(">hbhii")  # code, language, version, opaque, flag
assert BIN_FIXED.size == 13
_I32: Final = struct.Struct(">i")
_I16: Final = struct.Struct(">h")

_json_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_json_loads = json.loads
# The C scanner behind json.loads, without its per-call bytes sniffing and trailing-whitespace regex.
_json_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_LANG_NAMES: Final = [lc.name for lc in LanguageCode]
_LANG_BY_ORDINAL: Final = tuple(LanguageCode)
_OTHER: Final = LanguageCode.OTHER
_msgpack_pack = msgpack.Packer(use_bin_type=True).pack  # no ``default`` hook: packing never leaves C
_msgpack_unpackb = msgpack.unpackb  # msgpack >= 1.0 (pyproject.toml): raw=False, strict_map_key=True by default
MSGPACK_OFFER_FIELD: Final = "rocketqMsgpack"
"""The ask (a request's remark) and the offer (a reply's ext field, value ``"true"``); the module docstring."""


def ask_msgpack(cmd: RemotingCommand) -> None:
    """``cmd``, built as msgpack, leaves as JSON asking the server whether it speaks msgpack."""
    cmd.serialize_type = SerializeType.JSON
    if cmd.remark is None:
        cmd.remark = MSGPACK_OFFER_FIELD


def _ext_value(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return None
    raise MalformedFrameError(f"extFields value of type {type(value).__name__} is not a string, number or boolean")


def _ext_fields(raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise MalformedFrameError("extFields is not an object")
    out: dict[str, str] = {}
    for k, v in raw.items():
        if not isinstance(k, str):
            raise MalformedFrameError("extFields key is not a string")
        s = _ext_value(v)
        if s is not None:
            out[k] = s
    return out


def _int_field(obj: dict[str, Any], key: str, default: int | None = None) -> int:
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
        raise MalformedFrameError(f"header field {key!r} is missing or not an integer")
    return value


def _from_mapping(obj: Any, serialize_type: SerializeType, body: bytes) -> RemotingCommand:
    # Fast paths for the well-typed header every client sends; anything odd goes through the checking helpers.
    if type(obj) is not dict:
        raise MalformedFrameError("header is not an object")
    get = obj.get
    code = get("code")
    if type(code) is not int:
        code = _int_field(obj, "code")
    version = get("version", 0)
    if type(version) is not int:
        version = _int_field(obj, "version", 0)
    opaque = get("opaque", 0)
    if type(opaque) is not int:
        opaque = _int_field(obj, "opaque", 0)
    flag = get("flag", 0)
    if type(flag) is not int:
        flag = _int_field(obj, "flag", 0)
    remark = get("remark")
    if remark is not None and type(remark) is not str:
        raise MalformedFrameError("header field 'remark' is not a string")
    lang = get("language")
    if type(lang) is str:
        language = LANGUAGE_BY_NAME.get(lang, _OTHER)
    elif type(lang) is int and 0 <= lang <= 12:
        language = _LANG_BY_ORDINAL[lang]
    else:
        language = language_from_name(lang)
    raw = get("extFields")
    ext: dict[str, str] = {}
    if type(raw) is dict:
        ext = raw  # a fresh dict from the decoder, kept as is when every key and value is already a string
        for k, v in raw.items():
            if type(k) is not str or type(v) is not str:
                ext = _ext_fields(raw)
                break
    elif raw is not None:
        ext = _ext_fields(raw)
    cmd = RemotingCommand(code, opaque, remark, ext, body, serialize_type)
    cmd.language = language
    cmd.version = version
    cmd.flag = flag
    return cmd


def _to_mapping(cmd: RemotingCommand, language: object, json_rpc_type: bool = True) -> dict[str, Any]:
    """The header object; ``json_rpc_type``: with JSON's ``serializeTypeCurrentRPC`` (msgpack's leaves it out)."""
    obj: dict[str, Any] = {"code": cmd.code}
    if cmd.ext_fields:
        obj["extFields"] = cmd.ext_fields
    obj["flag"] = cmd.flag
    obj["language"] = language
    obj["opaque"] = cmd.opaque
    if cmd.remark is not None:
        obj["remark"] = cmd.remark
    if json_rpc_type:
        obj["serializeTypeCurrentRPC"] = "JSON"
    obj["version"] = cmd.version
    return obj


def encode_json_header(cmd: RemotingCommand) -> bytes:
    """The fastjson layout (keys sorted, no spaces, non-ASCII kept), written out directly for the common shape."""
    try:
        ext = cmd.ext_fields
        lang = _LANG_NAMES[cmd.language]
        if ext:
            fields = ",".join([_json_str(k) + ":" + _json_str(v) for k, v in ext.items()])
            head = f'{{"code":{cmd.code:d},"extFields":{{{fields}}},"flag":{cmd.flag:d},"language":"{lang}"'
        else:
            head = f'{{"code":{cmd.code:d},"flag":{cmd.flag:d},"language":"{lang}"'
        remark = "" if cmd.remark is None else f',"remark":{_json_str(cmd.remark)}'
        text = f'{head},"opaque":{cmd.opaque:d}{remark},"serializeTypeCurrentRPC":"JSON","version":{cmd.version:d}}}'
    except (TypeError, ValueError):  # a value that is not a str/int: the generic encoder writes what it can, as before
        text = _json_dumps(_to_mapping(cmd, _LANG_NAMES[cmd.language]))
    try:
        return text.encode()
    except UnicodeEncodeError as exc:  # a lone surrogate, e.g. echoed from a JSON "\\ud800" escape
        raise LocalProtocolError(f"header does not encode as UTF-8: {exc}") from None


def decode_json_header(data: bytes | bytearray | memoryview, body: bytes) -> RemotingCommand:
    try:
        text = str(data, "utf-8")
        try:
            obj, end = _json_scan(text, 0)
        except StopIteration:  # no JSON value at 0 (e.g. leading whitespace): json.loads says what is wrong
            obj, end = _json_loads(text), len(text)
        if end != len(text):
            obj = _json_loads(text)  # trailing whitespace is fine, anything else raises "Extra data"
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise MalformedFrameError(f"JSON header does not parse: {type(exc).__name__}: {exc}") from None
    return _from_mapping(obj, SerializeType.JSON, body)


def encode_msgpack_header(cmd: RemotingCommand) -> bytes:
    obj = _to_mapping(cmd, int(cmd.language), False)
    try:
        return _msgpack_pack(obj)  # type: ignore[no-any-return]
    except (OverflowError, TypeError, ValueError) as exc:  # e.g. an int beyond 64 bits, a lone surrogate
        raise LocalProtocolError(f"header does not fit the msgpack encoding: {exc}") from None


def decode_msgpack_header(data: bytes | bytearray | memoryview, body: bytes) -> RemotingCommand:
    try:
        obj = _msgpack_unpackb(data)  # its defaults: raw=False, strict_map_key=True (no keywords parsed per frame)
    except Exception as exc:  # msgpack raises several unrelated types for bad input
        raise MalformedFrameError(f"msgpack header does not parse: {exc}") from None
    return _from_mapping(obj, SerializeType.MSGPACK, body)


def encode_rocketmq_header(cmd: RemotingCommand) -> bytes:
    try:
        parts = [BIN_FIXED.pack(cmd.code, int(cmd.language), cmd.version, cmd.opaque, cmd.flag)]
    except struct.error as exc:
        raise LocalProtocolError(f"header field out of range for the ROCKETMQ encoding: {exc}") from None
    ext = bytearray()
    try:
        remark = cmd.remark.encode() if cmd.remark else b""
        for k, v in cmd.ext_fields.items():
            kb = k.encode()
            vb = v.encode()
            ext += _I16.pack(len(kb))
            ext += kb
            ext += _I32.pack(len(vb))
            ext += vb
    except (UnicodeEncodeError, struct.error) as exc:  # a lone surrogate, a key of 32 KiB or more
        raise LocalProtocolError(f"header does not fit the ROCKETMQ encoding: {exc}") from None
    parts.append(_I32.pack(len(remark)))
    parts.append(remark)
    parts.append(_I32.pack(len(ext)))
    parts.append(bytes(ext))
    return b"".join(parts)


def decode_rocketmq_header(data: bytes | bytearray | memoryview, body: bytes) -> RemotingCommand:
    buf = bytes(data)
    n = len(buf)
    try:
        code, lang, version, opaque, flag = BIN_FIXED.unpack_from(buf, 0)
        pos = BIN_FIXED.size
        (rlen,) = _I32.unpack_from(buf, pos)
        pos += 4
        if rlen < 0 or pos + rlen > n:
            raise MalformedFrameError("ROCKETMQ header remark length out of range")
        remark = buf[pos : pos + rlen].decode() if rlen else None
        pos += rlen
        (elen,) = _I32.unpack_from(buf, pos)
        pos += 4
        end = pos + elen
        if elen < 0 or end > n:
            raise MalformedFrameError("ROCKETMQ header extFields length out of range")
        ext: dict[str, str] = {}
        while pos < end:
            (klen,) = _I16.unpack_from(buf, pos)
            pos += 2
            key = buf[pos : pos + klen].decode()
            pos += klen
            (vlen,) = _I32.unpack_from(buf, pos)
            pos += 4
            if klen < 0 or vlen < 0 or pos + vlen > end:
                raise MalformedFrameError("ROCKETMQ header extFields entry out of range")
            ext[key] = buf[pos : pos + vlen].decode()
            pos += vlen
    except (struct.error, UnicodeDecodeError) as exc:
        raise MalformedFrameError(f"ROCKETMQ header does not decode: {exc}") from None
    language = _LANG_BY_ORDINAL[lang] if 0 <= lang <= 12 else _OTHER
    cmd = RemotingCommand(code, opaque, remark, ext, body, SerializeType.ROCKETMQ)
    cmd.language = language
    cmd.version = version
    cmd.flag = flag
    return cmd


def encode_header(cmd: RemotingCommand) -> bytes:
    st = cmd.serialize_type
    if st == SerializeType.JSON:
        return encode_json_header(cmd)
    if st == SerializeType.MSGPACK:
        return encode_msgpack_header(cmd)
    if st == SerializeType.ROCKETMQ:
        return encode_rocketmq_header(cmd)
    raise LocalProtocolError(f"unknown serialize type {st}")


def decode_header(serialize_type: int, data: bytes | bytearray | memoryview, body: bytes) -> RemotingCommand:
    if serialize_type == SerializeType.JSON:
        return decode_json_header(data, body)
    if serialize_type == SerializeType.MSGPACK:
        return decode_msgpack_header(data, body)
    if serialize_type == SerializeType.ROCKETMQ:
        return decode_rocketmq_header(data, body)
    raise MalformedFrameError(f"unknown serialize type {serialize_type}")
