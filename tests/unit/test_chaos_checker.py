"""The chaos suite's pure parts: the network identity ``ROCKETQ_CHAOS_NET`` selects (``tests/chaos/netns.py``) and
the checker's verdict on a run's record (``tests/chaos/checker.py``) — both consumers judged, windows per client."""

from __future__ import annotations

import pytest

from tests.chaos.checker import judge
from tests.chaos.netns import identity
from tests.chaos.workload import Ack, Record


def test_default_identity_is_the_historic_one_and_k_gives_a_disjoint_one() -> None:
    d = identity("")
    assert (d.subnet, d.bridge, d.prefix, d.lock) == ("10.77.0", "rqcbr0", "rqc-", "/tmp/rocketq-chaos-netns.lock")
    assert d.host_end(21) == "rqc21h" and d.owns_link("rqc21h") and not d.owns_link("rqcbr0")
    k = identity("5")
    assert (k.subnet, k.bridge, k.prefix, k.lock) == ("10.78.5", "rq5br0", "rq5-", "/tmp/rocketq-chaos-netns-5.lock")
    assert k.host_end(21) == "rq5v21" and k.owns_link("rq5v21")
    # neither identity's cleanup touches the other's links, nor a longer k's
    assert not k.owns_link("rqc21h") and not d.owns_link("rq5v21") and not k.owns_link("rq55v21")
    assert not k.owns_link("rq5br0")
    for bad in ("0", "100", "x"):
        with pytest.raises(ValueError):
            identity(bad)


def _ack(key: str, qid: int, off: int, t: float) -> Ack:
    return Ack(key, qid, off, "10.0.0.1:10911", t, t + 0.01)


def test_checker_judges_each_consumer_and_each_producer_lane() -> None:
    record = Record()
    # queue 0: py and the probe interleave; each keeps its own send order
    record.acks = [
        _ack("py-0", 0, 0, 1.0),
        _ack("probe-0", 0, 2, 1.1),
        _ack("py-1", 0, 1, 1.2),  # sent after probe-0, stored before it: another producer, no violation
        _ack("py-2", 0, 3, 12.0),
        _ack("probe-1", 0, 4, 10.4),
    ]
    final = {0: ["py-0", "py-1", "probe-0", "py-2", "probe-1"]}
    record.consumed = [(k, 0, i) for i, k in enumerate(final[0])] + [("py-0", 0, 0)]
    record.consumed_cpp = [(k, 0, i) for i, k in enumerate(final[0]) if k != "py-2"]
    v = judge("t", record, final, {"b1": final}, {}, {}, [2.0])
    assert v.order_violations == 0 and not v.lost and not v.fenced
    assert v.unconsumed == [] and v.redelivered == 1
    assert v.unconsumed_cpp == ["py-2"] and not v.ok  # the C++ consumer's gap fails the run
    assert v.unavailable == [8.41]  # the probe's ack at 10.41 ends the window from the fault at 2.0
    assert v.unavailable_main == [10.01]  # the main producer's next ack came at 12.01
