"""The store's kept filter verdicts (``broker/store/filter_marks.py``): a window of one byte per queue offset that
grows by appends, is cut back with its queue, keeps only the newest ``WINDOW`` entries, and the registry of the keys
dispatch judges per topic."""

from __future__ import annotations

from broker.store.filter_marks import MATCH, MAX_KEYS, MISS, UNKNOWN, WINDOW, FilterMarks, QueueMarks
from broker.store.request import MarkSpec


def test_window_pads_what_is_not_kept_with_unknown() -> None:
    qm = QueueMarks(10)
    for off, v in ((10, MATCH), (11, MISS), (13, MATCH)):  # 12 skipped: unknown
        qm.set(off, v)
    assert qm.end == 14
    assert qm.window(10, 4) == bytes([MATCH, MISS, UNKNOWN, MATCH])
    assert qm.window(8, 4) == bytes([UNKNOWN, UNKNOWN, MATCH, MISS])
    assert qm.window(12, 5) == bytes([UNKNOWN, MATCH, UNKNOWN, UNKNOWN, UNKNOWN])
    assert qm.window(0, 3) == bytes(3) and qm.window(50, 2) == bytes(2)
    assert not qm.all_match(10, 2) and not qm.all_match(9, 1) and not qm.all_match(13, 2)
    assert qm.all_match(13, 1) and qm.all_match(10, 1) and qm.all_match(10, 0)
    qm.set(5, MATCH)  # older than the window: not kept
    assert qm.window(5, 1) == bytes([UNKNOWN])
    qm.set(11, MATCH)  # a verdict judged again replaces the old one
    assert qm.window(11, 1) == bytes([MATCH])


def test_cut_forgets_the_entries_past_the_end() -> None:
    qm = QueueMarks(0)
    for off in range(10):
        qm.set(off, MATCH)
    qm.cut(4)
    assert qm.end == 4 and qm.window(0, 6) == bytes([MATCH] * 4 + [UNKNOWN] * 2)
    qm.cut(8)  # nothing past 8 is kept: no change
    assert qm.end == 4


def test_only_the_newest_window_is_kept() -> None:
    qm = QueueMarks(0)
    for off in range(WINDOW + 1):
        qm.set(off, MISS)
    assert len(qm.bits) <= WINDOW and qm.end == WINDOW + 1
    assert qm.window(0, 1) == bytes([UNKNOWN]) and qm.window(WINDOW, 1) == bytes([MISS])
    qm.set(qm.end + 2 * WINDOW, MATCH)  # far ahead: starts over there
    assert len(qm.bits) == 1 and qm.window(qm.base, 1) == bytes([MATCH])


def _for_read(marks: FilterMarks, topic: str, queue_id: int, spec: MarkSpec, max_offset: int) -> QueueMarks:
    qm = marks.for_read(topic, queue_id, spec, max_offset)
    assert qm is not None
    return qm


def test_registry_judges_at_dispatch_only_the_registered_topics() -> None:
    marks = FilterMarks()
    spec = MarkSpec("SQL92:a = 1", lambda props: "a\x011\x02" in str(props))
    assert marks.topics == {}
    qm = _for_read(marks, "T", 0, spec, 3)  # three messages there before the key existed: unknown
    assert qm.window(0, 3) == bytes(3)
    keys = marks.topics["T"]
    marks.on_dispatch(keys, "T", 0, 3, "a\x011\x02")
    marks.on_dispatch(keys, "T", 0, 4, "a\x012\x02")
    marks.on_dispatch(keys, "T", 1, 0, "a\x011\x02")
    assert _for_read(marks, "T", 0, spec, 5).window(3, 2) == bytes([MATCH, MISS])
    assert _for_read(marks, "T", 1, spec, 1).window(0, 1) == bytes([MATCH])
    assert _for_read(marks, "T", 0, spec, 4).end == 4  # the queue was cut back to 4 entries: offset 4 forgotten
    assert marks.stats() == {"filterKeys": 1, "filterVerdicts": 5}
    marks.drop("T", spec.key)
    assert marks.topics == {} and marks.stats() == {"filterKeys": 0, "filterVerdicts": 0}
    marks.for_read("U", 0, spec, 0)
    marks.forget({"U"})
    assert marks.topics == {}


def test_a_topic_keeps_at_most_max_keys() -> None:
    marks = FilterMarks()
    specs = [MarkSpec(f"SQL92:a = {i}", lambda props: True) for i in range(MAX_KEYS + 1)]
    assert all(marks.for_read("T", 0, spec, 0) is not None for spec in specs[:MAX_KEYS])
    assert marks.for_read("T", 0, specs[MAX_KEYS], 0) is None  # one too many: that read tests every record
    assert marks.for_read("T", 0, specs[0], 0) is not None  # the registered ones go on
    assert marks.for_read("U", 0, specs[MAX_KEYS], 0) is not None  # per topic
