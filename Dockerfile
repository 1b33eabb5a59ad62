# rocketq: one image for the name server and the broker (and mqadmin). Same conventions as apache/rocketmq:
# user rocketmq (uid/gid 3000), /home/rocketmq/{store,logs}, ports 9876 (namesrv) and 10911 (broker).
#   docker build -t rocketq .
#   docker run --rm -p 9876:9876 rocketq mqnamesrv
#   docker run --rm -p 10911:10911 -e NAMESRV_ADDR=host:9876 rocketq mqbroker
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# glibc: buffers of 1 MiB and more are mmapped and returned on free (README: Security, Limits)
ENV MALLOC_MMAP_THRESHOLD_=1048576

RUN groupadd --gid 3000 rocketmq \
    && useradd --uid 3000 --gid 3000 --create-home --home-dir /home/rocketmq --shell /usr/sbin/nologin rocketmq

WORKDIR /opt/rocketq
COPY pyproject.toml README.md ./
COPY protocol ./protocol
COPY runtime ./runtime
COPY namesrv ./namesrv
COPY controller ./controller
COPY broker ./broker
COPY client ./client
COPY spark_connector ./spark_connector
COPY rocketq ./rocketq
RUN pip install '.[grpc]' && rm -rf /opt/rocketq/build

RUN mkdir -p /home/rocketmq/store /home/rocketmq/logs /home/rocketmq/conf \
    && chown -R rocketmq:rocketmq /home/rocketmq
USER rocketmq
WORKDIR /home/rocketmq
VOLUME ["/home/rocketmq/store", "/home/rocketmq/logs"]
EXPOSE 9876 10909 10911 5557 5558 8081

CMD ["mqnamesrv"]
