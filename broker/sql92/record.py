"""A compiled selector applied to a stored record (``record_matcher``) or to a message's properties as dispatch has
them (``properties_matcher``: the stored properties string, or a dict): only the properties the expression names
are looked up, in the record's raw properties bytes (or the string), and only their values are decoded. Both give
the same verdict for the same message (the store keeps dispatch's verdicts for reads: ``broker.store.filter_marks``).

The properties block of a record (``protocol.message``'s record table: its offsets are used from there) is
``name \\x01 value \\x02`` repeated; a name matches at the block's start or right after a ``\\x02`` and the last
occurrence wins (as ``decode_properties``).
Per record: one header read to find the block, one copy of it (a few hundred bytes), then per name the expression
asks for one ``rfind`` and the decode of that value alone; nothing when the selector is decided without it
(``AND``/``OR`` short-circuit). A record that cannot be read, or whose evaluation fails (J's exceptions), does not
match.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping

from broker.sql92.compiler import Selector
from protocol.record import I32, POS_BODYLEN_V4, POS_SYSFLAG, SYSFLAG_BORNHOST_V6, SYSFLAG_STOREHOST_V6

_HOST_V6 = SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6  # each adds 12 bytes to the header

# name → (b"\x02name\x01", b"name\x01"): the byte patterns of a property name, built once
_KEYS: dict[str, tuple[bytes, bytes]] = {}


def _keys(name: str) -> tuple[bytes, bytes]:
    k = _KEYS.get(name)
    if k is None:
        key = name.encode() + b"\x01"
        k = _KEYS[name] = (b"\x02" + key, key)
    return k


# size (0), sysFlag (36) and, with IPv4 hosts, the body length (84): one unpack for the common record
_HEAD_V4 = struct.Struct(f">i{POS_SYSFLAG - 4}xi{POS_BODYLEN_V4 - POS_SYSFLAG - 4}xi")


def _properties_bytes(view: memoryview) -> bytes:
    """The properties block of the (valid) record at the start of ``view``."""
    size, sys_flag, blen = _HEAD_V4.unpack_from(view, 0)
    p = POS_BODYLEN_V4
    if sys_flag & _HOST_V6:
        p += (12 if sys_flag & SYSFLAG_BORNHOST_V6 else 0) + (12 if sys_flag & SYSFLAG_STOREHOST_V6 else 0)
        (blen,) = I32.unpack_from(view, p)
    p += 4 + blen
    p += 1 + view[p] + 2  # topic length byte, topic, properties length (short)
    return view[p:size].tobytes()


def record_matcher(selector: Selector) -> Callable[[memoryview], bool]:
    """The per-record test of ``selector``: True only when the expression evaluates to TRUE on the record's
    properties."""
    evaluate = selector.evaluate
    keys = _keys
    known = _KEYS

    def match(view: memoryview) -> bool:
        try:
            raw = _properties_bytes(view)
        except (struct.error, IndexError, ValueError):
            return False

        def get(name: str) -> str | None:
            try:
                sep_key, key = known[name]
            except KeyError:
                sep_key, key = keys(name)
            i = raw.rfind(sep_key)
            if i >= 0:
                start = i + len(sep_key)
            elif raw.startswith(key):
                start = len(key)
            else:
                return None
            end = raw.find(b"\x02", start)
            return (raw[start:end] if end >= 0 else raw[start:]).decode()

        try:
            return evaluate(get) is True
        except Exception:  # J's evaluation exceptions (and anything else): no match, as J logs and skips it
            return False

    return match


# name → ("\x02name\x01", "name\x01"): the string patterns of a property name, built once
_STR_KEYS: dict[str, tuple[str, str]] = {}


def _str_keys(name: str) -> tuple[str, str]:
    k = _STR_KEYS.get(name)
    if k is None:
        k = _STR_KEYS[name] = ("\x02" + name + "\x01", name + "\x01")
    return k


def properties_matcher(selector: Selector) -> Callable[[str | Mapping[str, str] | tuple[object, ...]], bool]:
    """``record_matcher``'s test over a message's properties: the stored properties string (``name \\x01 value
    \\x02`` …, the last occurrence wins), a mapping, or dispatch's (string, TAGS, KEYS, UNIQ_KEY) tuple."""
    evaluate = selector.evaluate
    keys = _str_keys
    known = _STR_KEYS

    def match(props: str | Mapping[str, str] | tuple[object, ...]) -> bool:
        if isinstance(props, tuple):
            props = props[0]  # type: ignore[assignment]
        get: Callable[[str], str | None]
        if isinstance(props, str):
            raw = props

            def get_text(name: str) -> str | None:
                try:
                    sep_key, key = known[name]
                except KeyError:
                    sep_key, key = keys(name)
                i = raw.rfind(sep_key)
                if i >= 0:
                    start = i + len(sep_key)
                elif raw.startswith(key):
                    start = len(key)
                else:
                    return None
                end = raw.find("\x02", start)
                return raw[start:end] if end >= 0 else raw[start:]

            get = get_text
        elif isinstance(props, Mapping):
            mapping: Mapping[str, str] = props

            def get_mapped(name: str) -> str | None:
                return mapping.get(name)

            get = get_mapped
        else:
            return False
        try:
            return evaluate(get) is True
        except Exception:  # as record_matcher: an evaluation error is no match
            return False

    return match
