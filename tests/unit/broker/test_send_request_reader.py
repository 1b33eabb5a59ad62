"""``SendRequest.of_ext_fields`` (the send handler's reader: ext fields straight into the request, no header object)
gives what the header's own reader and ``SendRequest.of_header`` give, on any input: the same request, field by
field, or the same error."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from broker.services.send import SendRequest
from protocol.headers import SEND_V1_NAMES, SEND_V2_NAMES, SendMessageRequestHeader

_V1_BASE = SendMessageRequestHeader.of("G", "T", "TBW102", 4, 1, 0, 1700000000000, 0, "TAGS\x01a", 2).to_ext_fields()
_V2_BASE = SendMessageRequestHeader.of("G", "T", "TBW102", 4, 1, 4, 1700000000000, 0, "TAGS\x01a").to_v2_ext_fields()
_SLOTS = [
    "topic", "queue_id", "flag", "sys_flag", "born_timestamp", "born_host", "body", "properties", "reconsume_times",
    "prepared_transaction_offset", "batch", "prepared", "message_group", "default_topic", "default_queue_nums",
    "client_topics_only", "msg_type",
]  # fmt: skip
_values = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.sampled_from(["", "abc", "true", "false", "TRUE", "False", "0", "1", "4", " 7", "1_0", "-", "\x01\x02"]),
    st.text(max_size=8),
)


def _outcome(fn: Any) -> Any:
    try:
        req = fn()
    except (KeyError, ValueError, TypeError) as exc:
        return (type(exc), str(exc))
    return ("ok", [getattr(req, name) for name in _SLOTS])


def _agree(d: dict[str, str], names: tuple[str, ...], batch: bool) -> None:
    read = (
        SendMessageRequestHeader.from_ext_fields
        if names is SEND_V1_NAMES
        else SendMessageRequestHeader.from_v2_ext_fields
    )

    def via_header() -> SendRequest:
        h = read(d)
        return SendRequest.of_header(h, b"body", "10.0.0.1:7", batch or h.batch)

    expect = _outcome(via_header)
    assert _outcome(lambda: SendRequest.of_ext_fields(d, names, b"body", "10.0.0.1:7", batch)) == expect


def test_names_are_the_wire_names_in_v1_field_order() -> None:
    h = SendMessageRequestHeader.of("G", "T", "D", 3, 2, 1, 5, 6, "p", 7, True, 8)
    v1, v2 = h.to_ext_fields(), h.to_v2_ext_fields()
    assert [v1.get(n) for n in SEND_V1_NAMES] == [v2.get(n) for n in SEND_V2_NAMES]
    assert set(SEND_V1_NAMES) >= set(v1) and set(SEND_V2_NAMES) >= set(v2)


@given(
    base=st.sampled_from([{}, _V1_BASE]),
    extra=st.dictionaries(st.sampled_from(SEND_V1_NAMES), _values),
    batch=st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_v1_reader_agrees_with_the_header(base: dict[str, str], extra: dict[str, str], batch: bool) -> None:
    _agree({**base, **extra}, SEND_V1_NAMES, batch)


@given(
    base=st.sampled_from([{}, _V2_BASE]),
    extra=st.dictionaries(st.sampled_from(SEND_V2_NAMES), _values),
    batch=st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_v2_reader_agrees_with_the_header(base: dict[str, str], extra: dict[str, str], batch: bool) -> None:
    _agree({**base, **extra}, SEND_V2_NAMES, batch)


def test_a_prepared_single_send_is_a_half_message_and_a_batch_never_is() -> None:
    req = SendRequest.of_ext_fields(_V2_BASE, SEND_V2_NAMES, b"b", "h:1", False)  # sysFlag 4: TRANSACTION_PREPARED
    assert req.prepared and not req.batch and req.default_topic == "TBW102" and req.default_queue_nums == 4
    req = SendRequest.of_ext_fields(_V2_BASE, SEND_V2_NAMES, b"b", "h:1", True)
    assert req.batch and not req.prepared
