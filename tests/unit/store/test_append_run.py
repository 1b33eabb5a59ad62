"""A batch append's results as columns (``AppendRun``) say what one AppendResult per message says: the same msgIds
text (one pass vs ``joined_msg_ids``), offsets, sizes and end, for any sizes, start offset, host and step."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from broker.store.results import AppendResult, AppendRun, PutMessageResult, PutMessageStatus, joined_msg_ids
from protocol.msg_id import offset_msg_id_prefix

_hosts = st.sampled_from([("127.0.0.1", 10911), ("10.255.0.7", 65535), ("0.0.0.0", 1), ("::1", 10911)])


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=1 << 22), min_size=1, max_size=600),
    phys=st.integers(min_value=0, max_value=(1 << 62)),
    qoff=st.integers(min_value=0, max_value=1 << 40),
    step=st.sampled_from([0, 1]),
    host=_hosts,
)
def test_run_equals_one_result_per_message(
    sizes: list[int], phys: int, qoff: int, step: int, host: tuple[str, int]
) -> None:
    prefix = offset_msg_id_prefix(*host)
    run = AppendRun(phys, phys + sum(sizes), sizes, 3, qoff, step, 1_700_000_000_000, prefix)
    expected: list[AppendResult] = []
    p, q = phys, qoff
    for size in sizes:
        expected.append(AppendResult(p, size, 3, q, 1_700_000_000_000, prefix))
        p, q = p + size, q + step
    got = run.results()
    assert [(r.wrote_offset, r.size, r.queue_id, r.queue_offset, r.store_timestamp, r.msg_id) for r in got] == [
        (r.wrote_offset, r.size, r.queue_id, r.queue_offset, r.store_timestamp, r.msg_id) for r in expected
    ]
    assert run.msg_ids() == joined_msg_ids(expected)
    assert run.msg_ids().split(",") == [r.msg_id for r in expected]
    as_run = PutMessageResult(PutMessageStatus.PUT_OK, None, "", run)
    as_list = PutMessageResult(PutMessageStatus.PUT_OK, expected)
    for res in (as_run, as_list):
        assert res.count == len(sizes)
        assert res.end_offset == p
        assert res.stored_bytes == sum(sizes)
        assert res.first().msg_id == expected[0].msg_id
        assert res.msg_ids() == (expected[0].msg_id if len(sizes) == 1 else joined_msg_ids(expected))
    assert as_run.items[-1].wrote_offset == expected[-1].wrote_offset  # built on first use


def test_failed_put_has_no_messages() -> None:
    res = PutMessageResult(PutMessageStatus.MESSAGE_ILLEGAL, remark="bad")
    assert res.count == 0 and res.items == [] and not res.ok
