"""The connector's TLS options against a name server and a broker that accept TLS only (``tls.server.mode=
enforcing``): the sink, the batch reader and the driver's look-ups all dial over TLS with ``useTLS``, verified
against the test CA; without ``useTLS`` nothing gets through."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.servers import Servers, launch
from tests.spark.support import SPARK_BROKER_CONF

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Servers, str]]:
    trustme = pytest.importorskip("trustme")
    work = tmp_path_factory.mktemp("tls-servers")
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    ca.cert_pem.write_to_path(str(work / "ca.pem"))
    for i, pem in enumerate(server.cert_chain_pems):
        pem.write_to_path(str(work / "server.pem"), append=i > 0)
    server.private_key_pem.write_to_path(str(work / "server.key"))
    tls = f"tls.server.mode=enforcing\ntls.server.certPath={work}/server.pem\ntls.server.keyPath={work}/server.key\n"
    dial = f"tls.enable=true\ntls.client.authServer=true\ntls.client.trustCertPath={work}/ca.pem\n"
    servers = launch(work, cluster="SparkCluster", namesrv_extra=tls, broker_extra=SPARK_BROKER_CONF + tls + dial)
    try:
        yield servers, str(work / "ca.pem")
    finally:
        servers.stop()


@pytest.mark.timeout(300)
def test_sink_and_reader_over_tls(spark: Any, tls_cluster: tuple[Servers, str]) -> None:
    servers, ca = tls_cluster
    tls = {"namesrvAddr": servers.ns_addr, "useTLS": "true", "tlsTrustCertPath": ca}
    sent = [f"tls-{i}".encode() for i in range(30)]
    df = spark.createDataFrame([(b,) for b in sent], "body binary")
    df.write.format("rocketmq").options(**tls, topic="spark_tls").mode("append").save()
    got = spark.read.format("rocketmq").options(**tls, subscribe="spark_tls").load().select("body").collect()
    assert sorted(bytes(r.body) for r in got) == sorted(sent)
    with pytest.raises(Exception, match="rocketmq"):  # plain connections are refused by the TLS-only name server
        spark.read.format("rocketmq").options(
            namesrvAddr=servers.ns_addr, subscribe="spark_tls", fetchRetries="0", pollTimeoutMs="3000"
        ).load().count()


def test_tls_paths_without_use_tls_are_an_option_error(spark: Any, tls_cluster: tuple[Servers, str]) -> None:
    servers, ca = tls_cluster
    with pytest.raises(Exception, match="need useTLS=true"):
        spark.read.format("rocketmq").options(namesrvAddr=servers.ns_addr, subscribe="t", tlsTrustCertPath=ca).load()
