"""The timer's diversion rules (J ``HookUtils.transformTimerMessage``) and its on-disk wheel: slot chains, rounds
sharing a slot, and recovery cutting back to the checkpoint after a crash, on a real store under tmp_path."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from broker.services.timer import TIMER_TOPIC, TimerRejected, TimerService, TimerSettings
from broker.store import MessageStore, StoreConfig
from protocol.codes import ResponseCode

NOW = 1_764_280_000_500  # ms, not a multiple of the precision


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[MessageStore]:
    s = MessageStore.open(StoreConfig(store_path_root_dir=str(tmp_path / "store")))
    await s.start()
    try:
        yield s
    finally:
        await s.close()


def _service(store: MessageStore, tmp_path: Path, **kw: object) -> TimerService:
    settings = TimerSettings(root_dir=str(tmp_path / "store"), max_delay_sec=60, log_segment_units=4, **kw)  # type: ignore[arg-type]
    return TimerService(store, settings, clock=lambda: NOW / 1000)


def test_divert_rounds_down_to_the_precision_as_j(store: MessageStore, tmp_path: Path) -> None:
    t = _service(store, tmp_path)
    props = {"TIMER_DELIVER_MS": str(NOW + 7_300)}
    assert t.divert("T", 3, props) == (TIMER_TOPIC, 0)
    assert props["TIMER_OUT_MS"] == str((NOW + 7_300) // 1000 * 1000)
    assert props["REAL_TOPIC"] == "T" and props["REAL_QID"] == "3"
    exact = {"TIMER_DELIVER_MS": str(1_764_280_010_000)}  # an exact multiple goes one precision lower
    t.divert("T", 0, exact)
    assert exact["TIMER_OUT_MS"] == str(1_764_280_009_000)
    sec = {"TIMER_DELAY_SEC": "2", "TIMER_DELAY_MS": "50000", "TIMER_DELIVER_MS": "1"}  # seconds win
    t.divert("T", 0, sec)
    assert sec["TIMER_OUT_MS"] == str((NOW + 2000) // 1000 * 1000)
    past = {"TIMER_DELIVER_MS": str(NOW - 1)}
    assert t.divert("T", 1, past) == ("T", 1) and "TIMER_OUT_MS" not in past


@pytest.mark.parametrize(
    ("props", "code"),
    [
        ({"TIMER_DELIVER_MS": str(NOW + 61_000)}, ResponseCode.MESSAGE_ILLEGAL),
        ({"TIMER_DELAY_MS": "abc"}, ResponseCode.MESSAGE_ILLEGAL),
        ({"TIMER_DELIVER_MS": str(NOW - 5), "TIMER_DEL_UNIQKEY": "x"}, ResponseCode.MESSAGE_ILLEGAL),
    ],
)
def test_divert_refusals(store: MessageStore, tmp_path: Path, props: dict[str, str], code: int) -> None:
    with pytest.raises(TimerRejected) as info:
        _service(store, tmp_path).divert("T", 0, props)
    assert info.value.code == code
    assert "max delay 60000ms" in info.value.remark


def test_divert_with_the_wheel_off(store: MessageStore, tmp_path: Path) -> None:
    with pytest.raises(TimerRejected) as info:
        _service(store, tmp_path, enable=False).divert("T", 0, {"TIMER_DELAY_MS": "10"})
    assert info.value.code == ResponseCode.SYSTEM_ERROR


async def test_recovery_cuts_units_after_the_checkpoint(store: MessageStore, tmp_path: Path) -> None:
    t = _service(store, tmp_path)
    t.open()
    s1, s2 = NOW // 1000 * 1000 + 5000, NOW // 1000 * 1000 + 9000
    t._link(100, 10, s1, NOW)
    t._link(200, 10, s1, NOW)
    t._link(300, 10, s2, NOW)
    await t._save()  # checkpoint: three units
    t._link(400, 10, s1, NOW)  # after the checkpoint: lost with the "crash" below
    t._link(500, 10, s2 + 1000, NOW)
    assert t._wheel is not None and t._wheel.get(s1)[2] == 3
    t._wheel.close()  # a crash: no stop(), no checkpoint
    assert t._log is not None
    t._log.close()

    again = _service(store, tmp_path)
    again.open()
    wheel, log = again._wheel, again._log
    assert wheel is not None and log is not None
    assert log.end == 3 * 40
    slot_ms, last, count = wheel.get(s1)
    assert (slot_ms, count) == (s1, 2)
    chain = []
    while last != -1:
        u = log.read(last)
        assert u is not None
        chain.append(u.phys)
        last = u.prev
    assert chain == [200, 100]
    assert wheel.get(s2)[2] == 1
    assert len(log.segments()) == 1  # 4 units per segment: the second one was cut
    await again.stop()


async def test_a_later_round_in_the_same_slot_is_kept_for_its_round(store: MessageStore, tmp_path: Path) -> None:
    t = _service(store, tmp_path)
    t.open()
    base = NOW // 1000 * 1000
    assert t._wheel is not None
    span = t._wheel.slots * 1000
    t._link(1, 10, base + span + 2000, NOW)  # next round of the slot of base + 2000
    assert await t._dequeue_slot(base + 2000) == 0  # nothing of this round: the unit is linked again
    slot_ms, _last, count = t._wheel.get(base + 2000)
    assert (slot_ms, count) == (base + span + 2000, 1)
    await t.stop()
