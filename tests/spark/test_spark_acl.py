"""The connector against a broker with ACL 1.0 on: ``accessKey``/``secretKey`` sign the sink's sends and the
source's pulls and look-ups; without them, or for a topic the account may not use, the broker refuses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.acl_support import NORMAL, write_acl
from tests.spark.support import Cluster, start_cluster

pytestmark = pytest.mark.spark

CREDS = {"accessKey": NORMAL.access_key, "secretKey": NORMAL.secret_key}  # topicA PUB|SUB, topicD DENY


@pytest.fixture(scope="module")
def acl_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    work = tmp_path_factory.mktemp("acl-servers")
    home = work / "home"
    write_acl(home)
    c = start_cluster(work, broker_extra=f"aclEnable=true\nrocketmqHome={home}\n")
    try:
        yield c
    finally:
        c.stop()


def _write(spark: Any, cluster: Cluster, topic: str, n: int, **options: str) -> None:
    df = spark.createDataFrame([(f"acl-{i}".encode(),) for i in range(n)], "body binary")
    writer = df.write.format("rocketmq").option("namesrvAddr", cluster.namesrv_addr).option("topic", topic)
    for k, v in options.items():
        writer = writer.option(k, v)
    writer.mode("append").save()


def _read(spark: Any, cluster: Cluster, topic: str, **options: str) -> list[bytes]:
    reader = spark.read.format("rocketmq").option("namesrvAddr", cluster.namesrv_addr).option("subscribe", topic)
    for k, v in options.items():
        reader = reader.option(k, v)
    return sorted(bytes(r.body) for r in reader.load().select("body").collect())


def test_signed_sink_and_reader_work_and_unsigned_or_denied_ones_are_refused(spark: Any, acl_cluster: Cluster) -> None:
    _write(spark, acl_cluster, "topicA", 20, **CREDS)
    assert _read(spark, acl_cluster, "topicA", **CREDS) == sorted(f"acl-{i}".encode() for i in range(20))
    with pytest.raises(Exception, match="AclException"):
        _read(spark, acl_cluster, "topicA", fetchRetries="0")  # no credentials: every pull is refused
    with pytest.raises(Exception, match="AclException"):
        _write(spark, acl_cluster, "topicD", 1, **CREDS)  # the account's topicD is DENY
    assert _read(spark, acl_cluster, "topicA", **CREDS) == sorted(f"acl-{i}".encode() for i in range(20))


def test_one_key_without_the_other_is_an_option_error(spark: Any, acl_cluster: Cluster) -> None:
    with pytest.raises(Exception, match="accessKey and secretKey go together"):
        _read(spark, acl_cluster, "topicA", accessKey=NORMAL.access_key)
