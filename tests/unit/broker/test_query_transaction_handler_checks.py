"""The check → code → remark tables of the message lookups (broker/handlers/query.py) and END_TRANSACTION
(broker/handlers/transaction.py), one row per case, dispatched through the wired registry on a fake channel. The
transaction rows that need a half message store one first with a prepared SEND_MESSAGE through the same registry
(the first record of a fresh commit log, so at commit-log offset 0 and half-queue offset 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker import topics as T
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from tests.eventually import eventually
from tests.integration.broker_wire import send_cmd, simple_cmd
from tests.unit.broker.handler_support import (
    CheckRow,
    WiredBroker,
    check_row,
    dispatch,
    put_topic,
    run_row,
    wired_broker,
)

R = ResponseCode
Row = CheckRow
Q = RequestCode


def _query(**overrides: object) -> RemotingCommand:
    fields: dict[str, object] = {
        "topic": "TopicA",
        "key": "k1",
        "maxNum": 32,
        "beginTimestamp": 0,
        "endTimestamp": 2**62,
    }
    fields.update(overrides)
    return simple_cmd(Q.QUERY_MESSAGE, **{k: v for k, v in fields.items() if v is not None})


# -- VIEW_MESSAGE_BY_ID / QUERY_MESSAGE (broker/handlers/query.py) ----------------------------------------------------

QUERY_ROWS = [
    Row("view-missing-offset", lambda: simple_cmd(Q.VIEW_MESSAGE_BY_ID), R.SYSTEM_ERROR, "<offset> is null"),
    Row(
        "view-offset-not-a-number",
        lambda: simple_cmd(Q.VIEW_MESSAGE_BY_ID, offset="zz"),
        R.SYSTEM_ERROR,
        "the custom field <offset> is not a valid number: 'zz'",
    ),
    Row(
        "view-negative-offset",
        lambda: simple_cmd(Q.VIEW_MESSAGE_BY_ID, offset=-1),
        R.SYSTEM_ERROR,
        "can not find message by the offset",
    ),
    Row(
        "view-nothing-at-offset",
        lambda: simple_cmd(Q.VIEW_MESSAGE_BY_ID, offset=4096),
        R.SYSTEM_ERROR,
        "can not find message by the offset",
    ),
    Row("query-missing-key", lambda: _query(key=None), R.SYSTEM_ERROR, "the custom field <key> is null"),
    Row(
        "query-missing-end-timestamp",
        lambda: _query(endTimestamp=None),
        R.SYSTEM_ERROR,
        "the custom field <endTimestamp> is null",
    ),
    Row(
        "query-max-num-not-a-number",
        lambda: _query(maxNum="many"),
        R.SYSTEM_ERROR,
        "the custom field <maxNum> is not a valid number: 'many'",
    ),
    Row(
        "query-unique-key-flag-not-a-boolean",
        lambda: _query(_UNIQUE_KEY_QUERY="perhaps"),
        R.SYSTEM_ERROR,
        "the custom field <_UNIQUE_KEY_QUERY> is not a valid boolean: 'perhaps'",
    ),
    Row(
        "query-nothing-found",
        lambda: _query(),
        R.QUERY_NOT_FOUND,
        "can not find message, maybe time range not correct",
        setup=[put_topic("TopicA")],
    ),
]


@pytest.mark.parametrize("row", QUERY_ROWS, ids=lambda r: r.id)
async def test_query_checks(tmp_path: Path, row: Row) -> None:
    resp = await run_row(tmp_path, row)
    check_row(resp, row)
    if row.code == R.QUERY_NOT_FOUND:
        assert {"indexLastUpdateTimestamp", "indexLastUpdatePhyoffset"} <= resp.ext_fields.keys()


async def test_view_and_query_a_stored_message(tmp_path: Path) -> None:
    """The success side of both tables: the record at offset 0, and the message found by its key."""
    async with wired_broker(tmp_path) as broker:
        put_topic("TopicA")(broker)
        sent = await dispatch(broker, send_cmd("TopicA", b"payload", keys="k1"))
        assert sent.code == R.SUCCESS, sent.remark
        view = await dispatch(broker, simple_cmd(Q.VIEW_MESSAGE_BY_ID, offset=0))
        assert (view.code, view.remark) == (R.SUCCESS, None)
        assert b"payload" in view.body
        # the key index is written by the store's dispatcher, after the put returns: poll

        async def found() -> RemotingCommand | None:
            resp = await dispatch(broker, _query())
            return resp if resp.code == R.SUCCESS else None

        resp = await eventually(found, timeout=5, what="the key indexed")
        assert (resp.code, resp.remark) == (R.SUCCESS, None)
        assert b"payload" in resp.body


# -- END_TRANSACTION (broker/handlers/transaction.py) ----------------------------------------------------------------

COMMIT = 8
ROLLBACK = 12


def _end(commit_or_rollback: int = COMMIT, **overrides: object) -> RemotingCommand:
    fields: dict[str, object] = {
        "producerGroup": "P",
        "tranStateTableOffset": 0,
        "commitLogOffset": 0,
        "commitOrRollback": commit_or_rollback,
        "msgId": "00",
        "fromTransactionCheck": "false",
    }
    fields.update(overrides)
    return simple_cmd(Q.END_TRANSACTION, **{k: v for k, v in fields.items() if v is not None})


async def _prepare(broker: WiredBroker) -> None:
    """A half message of producer group P for TopicA, at commit-log offset 0 and half-queue offset 0."""
    put_topic("TopicA")(broker)
    prepared = send_cmd("TopicA", b"tx", sys_flag=0x4, props={"TRAN_MSG": "true", "PGROUP": "P"})
    resp = await dispatch(broker, prepared)
    assert resp.code == R.SUCCESS, resp.remark
    assert resp.ext_fields["queueOffset"] == "0"


END_ROWS = [
    Row(
        "slave",
        lambda: _end(),
        R.SLAVE_NOT_AVAILABLE,
        "Can't find master broker",
        config={"brokerRole": "SLAVE", "brokerId": 1},
    ),
    Row(
        "missing-producer-group",
        lambda: _end(producerGroup=None),
        R.SYSTEM_ERROR,
        "the custom field <producerGroup> is null",
    ),
    Row(
        "missing-commit-or-rollback",
        lambda: _end(commitOrRollback=None),
        R.SYSTEM_ERROR,
        "the custom field <commitOrRollback> is null",
    ),
    Row(
        "commit-log-offset-not-a-number",
        lambda: _end(commitLogOffset="end"),
        R.SYSTEM_ERROR,
        "the custom field <commitLogOffset> is not a valid number: 'end'",
    ),
    Row("unknown-state-does-nothing", lambda: _end(0), R.SUCCESS, None),
    Row(
        "commit-no-half-message",
        lambda: _end(COMMIT, commitLogOffset=4096),
        R.SYSTEM_ERROR,
        "Find prepared transaction message failed",
    ),
    Row(
        "rollback-no-half-message",
        lambda: _end(ROLLBACK, commitLogOffset=4096),
        R.SYSTEM_ERROR,
        "Find prepared transaction message failed",
    ),
]


@pytest.mark.parametrize("row", END_ROWS, ids=lambda r: r.id)
async def test_end_transaction_checks(tmp_path: Path, row: Row) -> None:
    check_row(await run_row(tmp_path, row), row)


HALF_ROWS = [
    Row(
        "commit-other-producer-group",
        lambda: _end(COMMIT, producerGroup="Q"),
        R.SYSTEM_ERROR,
        "The producer group wrong",
    ),
    Row(
        "rollback-other-producer-group",
        lambda: _end(ROLLBACK, producerGroup="Q"),
        R.SYSTEM_ERROR,
        "The producer group wrong",
    ),
    Row(
        "commit-wrong-state-table-offset",
        lambda: _end(COMMIT, tranStateTableOffset=7),
        R.SYSTEM_ERROR,
        "The transaction state table offset wrong",
    ),
    Row("commit", lambda: _end(COMMIT), R.SUCCESS, None),
    Row("rollback", lambda: _end(ROLLBACK), R.SUCCESS, None),
]


@pytest.mark.parametrize("row", HALF_ROWS, ids=lambda r: r.id)
async def test_end_transaction_of_a_stored_half(tmp_path: Path, row: Row) -> None:
    """The rows that need the half message: the effect is checked too (real message stored on commit only, op
    marker written on commit and rollback, nothing on a refusal)."""
    async with wired_broker(tmp_path) as broker:
        await _prepare(broker)
        request_ = row.request()
        resp = await dispatch(broker, request_)
        check_row(resp, row)
        code = row.code
        committed = sum(broker.store.get_max_offset_in_queue("TopicA", q) for q in range(4))
        assert committed == (1 if request_.ext_fields["commitOrRollback"] == str(COMMIT) and code == R.SUCCESS else 0)
        op_written = broker.store.get_max_offset_in_queue(T.TRANS_OP_HALF_TOPIC, 0)
        assert op_written == (1 if code == R.SUCCESS else 0)


# -- prepared sends (broker/handlers/transaction.py intercept) ---------------------------------------------------------

PREPARED_ROWS = [
    Row(
        "rejected-by-config",
        lambda: send_cmd("TopicA", b"tx", sys_flag=0x4, props={"TRAN_MSG": "true", "PGROUP": "P"}),
        R.NO_PERMISSION,
        "the broker[127.0.0.1] sending transaction message is forbidden",
        config={"rejectTransactionMessage": "true"},
        setup=[put_topic("TopicA")],
    ),
    Row(
        "plain-send-not-rejected",
        lambda: send_cmd("TopicA", b"plain", props={"PGROUP": "P"}),
        R.SUCCESS,
        None,
        config={"rejectTransactionMessage": "true"},
        setup=[put_topic("TopicA")],
    ),
]


@pytest.mark.parametrize("row", PREPARED_ROWS, ids=lambda r: r.id)
async def test_prepared_send_checks(tmp_path: Path, row: Row) -> None:
    check_row(await run_row(tmp_path, row), row)
