"""Every config key RocketMQ 4.9.8 reads from a properties file, per Java config class, with the kind of value it
takes — the names ``MixAll.properties2Object`` derives from the classes' ``setXxx(int|long|boolean|String)`` setters.

The broker applies ``BrokerConfig``, ``MessageStoreConfig``, ``NettyServerConfig`` and ``NettyClientConfig`` to its
file; the name server ``NamesrvConfig`` and ``NettyServerConfig``. ``broker.config`` and ``namesrv.config`` accept
any of these keys: the ones their own table maps onto a setting take effect, the rest are accepted with one warning
line naming them (so an operator's existing file starts unchanged), and a key in none of these lists is an error
with a "did you mean". A key moves from "accepted without effect" to "takes effect" by being added to the server's
own table; nothing here changes.

Kinds: ``int`` (J int/long), ``bool`` (J boolean: ``true``/``false``), ``str``. Values of keys without effect are
still checked against their kind, so a typo in a value is reported the same way for every key.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

BROKER_CONFIG: dict[str, type] = {
    "aclEnable": bool,
    "adminBrokerThreadPoolNums": int,
    "autoCreateSubscriptionGroup": bool,
    "autoCreateTopicEnable": bool,
    "autoDeleteUnusedStats": bool,
    "brokerClusterName": str,
    "brokerFastFailureEnable": bool,
    "brokerId": int,
    "brokerIP1": str,
    "brokerIP2": str,
    "brokerName": str,
    "brokerPermission": int,
    "brokerTopicEnable": bool,
    "clientManagerThreadPoolQueueCapacity": int,
    "clientManageThreadPoolNums": int,
    "clusterTopicEnable": bool,
    "commercialBaseCount": int,
    "commercialBigCount": int,
    "commercialEnable": bool,
    "commercialTimerCount": int,
    "commercialTransCount": int,
    "compressedRegister": bool,
    "configBlackList": str,
    "consumerFallbehindThreshold": int,
    "consumerManagerThreadPoolQueueCapacity": int,
    "consumerManageThreadPoolNums": int,
    "defaultTopicQueueNums": int,
    "disableConsumeIfConsumerReadSlowly": bool,
    "enableCalcFilterBitMap": bool,
    "enableDetailStat": bool,
    "enablePropertyFilter": bool,
    "endTransactionPoolQueueCapacity": int,
    "endTransactionThreadPoolNums": int,
    "expectConsumerNumUseFilter": int,
    "fetchNamesrvAddrByAddressServer": bool,
    "filterDataCleanTimeSpan": int,
    "filterServerNums": int,
    "filterSupportRetry": bool,
    "flushConsumerOffsetHistoryInterval": int,
    "flushConsumerOffsetInterval": int,
    "forceRegister": bool,
    "heartbeatThreadPoolNums": int,
    "heartbeatThreadPoolQueueCapacity": int,
    "highSpeedMode": bool,
    "isolateLogEnable": bool,
    "longPollingEnable": bool,
    "maxDelayTime": int,
    "maxErrorRateOfBloomFilter": int,
    "messageStorePlugIn": str,
    "msgTraceTopicName": str,
    "namesrvAddr": str,
    "notifyConsumerIdsChangedEnable": bool,
    "processReplyMessageThreadPoolNums": int,
    "pullMessageThreadPoolNums": int,
    "pullThreadPoolQueueCapacity": int,
    "putMessageFutureThreadPoolNums": int,
    "putThreadPoolQueueCapacity": int,
    "queryMessageThreadPoolNums": int,
    "queryThreadPoolQueueCapacity": int,
    "regionId": str,
    "registerBrokerTimeoutMills": int,
    "registerNameServerPeriod": int,
    "rejectTransactionMessage": bool,
    "replyThreadPoolQueueCapacity": int,
    "rocketmqHome": str,
    "sendMessageThreadPoolNums": int,
    "sendThreadPoolQueueCapacity": int,
    "shortPollingTimeMills": int,
    "slaveReadEnable": bool,
    "startAcceptSendRequestTimeStamp": int,
    "storeReplyMessageEnable": bool,
    "traceOn": bool,
    "traceTopicEnable": bool,
    "transactionCheckInterval": int,
    "transactionCheckMax": int,
    "transactionTimeOut": int,
    "transferMsgByHeap": bool,
    "waitTimeMillsInHeartbeatQueue": int,
    "waitTimeMillsInPullQueue": int,
    "waitTimeMillsInSendQueue": int,
    "waitTimeMillsInTransactionQueue": int,
}

MESSAGE_STORE_CONFIG: dict[str, type] = {
    "accessMessageInMemoryMaxRatio": int,
    "bitMapLengthConsumeQueueExt": int,
    "brokerRole": str,
    "checkCRCOnRecover": bool,
    "cleanFileForciblyEnable": bool,
    "cleanResourceInterval": int,
    "commitCommitLogLeastPages": int,
    "commitCommitLogThoroughInterval": int,
    "commitIntervalCommitLog": int,
    "debugLockEnable": bool,
    "defaultQueryMaxNum": int,
    "deleteCommitLogFilesInterval": int,
    "deleteConsumeQueueFilesInterval": int,
    "deleteWhen": str,
    "destroyMapedFileIntervalForcibly": int,
    "diskFallRecorded": bool,
    "diskMaxUsedSpaceRatio": int,
    "dLegerGroup": str,
    "dLegerPeers": str,
    "dLegerSelfId": str,
    "duplicationEnable": bool,
    "enableBatchPush": bool,
    "enableConsumeQueueExt": bool,
    "enableDLegerCommitLog": bool,
    "enableLmq": bool,
    "enableMultiDispatch": bool,
    "enableScheduleAsyncDeliver": bool,
    "enableScheduleMessageStats": bool,
    "fastFailIfNoBufferInStorePool": bool,
    "fileReservedTime": int,
    "flushCommitLogLeastPages": int,
    "flushCommitLogThoroughInterval": int,
    "flushCommitLogTimed": bool,
    "flushConsumeQueueLeastPages": int,
    "flushConsumeQueueThoroughInterval": int,
    "flushDelayOffsetInterval": int,
    "flushDiskType": str,
    "flushIntervalCommitLog": int,
    "flushIntervalConsumeQueue": int,
    "flushLeastPagesWhenWarmMapedFile": int,
    "haHousekeepingInterval": int,
    "haListenPort": int,
    "haMasterAddress": str,
    "haSendHeartbeatInterval": int,
    "haSlaveFallbehindMax": int,
    "haTransferBatchSize": int,
    "mappedFileSizeCommitLog": int,
    "mappedFileSizeConsumeQueue": int,
    "mappedFileSizeConsumeQueueExt": int,
    "maxHashSlotNum": int,
    "maxIndexNum": int,
    "maxLmqConsumeQueueNum": int,
    "maxMessageSize": int,
    "maxMsgsNumBatch": int,
    "maxTransferBytesOnMessageInDisk": int,
    "maxTransferBytesOnMessageInMemory": int,
    "maxTransferCountOnMessageInDisk": int,
    "maxTransferCountOnMessageInMemory": int,
    "messageDelayLevel": str,
    "messageIndexEnable": bool,
    "messageIndexSafe": bool,
    "offsetCheckInSlave": bool,
    "osPageCacheBusyTimeOutMills": int,
    "preferredLeaderId": str,
    "putMsgIndexHightWater": int,
    "readOnlyCommitLogStorePaths": str,
    "redeleteHangedFileInterval": int,
    "scheduleAsyncDeliverMaxPendingLimit": int,
    "scheduleAsyncDeliverMaxResendNum2Blocked": int,
    "slaveTimeout": int,
    "storePathCommitLog": str,
    "storePathDLedgerCommitLog": str,
    "storePathRootDir": str,
    "syncFlushTimeout": int,
    "transientStorePoolEnable": bool,
    "transientStorePoolSize": int,
    "useReentrantLockWhenPutMessage": bool,
    "warmMapedFileEnable": bool,
}

NETTY_SERVER_CONFIG: dict[str, type] = {
    "listenPort": int,
    "serverAsyncSemaphoreValue": int,
    "serverCallbackExecutorThreads": int,
    "serverChannelMaxIdleTimeSeconds": int,
    "serverOnewaySemaphoreValue": int,
    "serverPooledByteBufAllocatorEnable": bool,
    "serverSelectorThreads": int,
    "serverSocketBacklog": int,
    "serverSocketRcvBufSize": int,
    "serverSocketSndBufSize": int,
    "serverWorkerThreads": int,
    "useEpollNativeSelector": bool,
    "writeBufferHighWaterMark": int,
    "writeBufferLowWaterMark": int,
}

NETTY_CLIENT_CONFIG: dict[str, type] = {
    "channelNotActiveInterval": int,
    "clientAsyncSemaphoreValue": int,
    "clientCallbackExecutorThreads": int,
    "clientChannelMaxIdleTimeSeconds": int,
    "clientCloseSocketIfTimeout": bool,
    "clientOnewaySemaphoreValue": int,
    "clientPooledByteBufAllocatorEnable": bool,
    "clientSocketRcvBufSize": int,
    "clientSocketSndBufSize": int,
    "clientWorkerThreads": int,
    "connectTimeoutMillis": int,
    "useTLS": bool,
    "writeBufferHighWaterMark": int,
    "writeBufferLowWaterMark": int,
}

NAMESRV_CONFIG: dict[str, type] = {
    "clusterTest": bool,
    "configBlackList": str,
    "configStorePath": str,
    "kvConfigPath": str,
    "orderMessageEnable": bool,
    "productEnvName": str,
    "rocketmqHome": str,
}

# What each server applies to its file, in J's order.
BROKER_FILE_KEYS: dict[str, type] = {
    **NETTY_CLIENT_CONFIG,
    **NETTY_SERVER_CONFIG,
    **MESSAGE_STORE_CONFIG,
    **BROKER_CONFIG,
}
NAMESRV_FILE_KEYS: dict[str, type] = {**NETTY_SERVER_CONFIG, **NAMESRV_CONFIG}

_EXPECTED = {int: "an integer", bool: "true or false", str: "a string"}


def expected_form(kind: type) -> str:
    """How a value of ``kind`` must look, for error messages."""
    return _EXPECTED.get(kind, kind.__name__)


def check_value(key: str, kind: type, value: str) -> str | None:
    """``None`` when ``value`` is a valid J ``kind``, else the message ``key=value: expected <form>``."""
    text = value.strip()
    if kind is bool and text.lower() not in ("true", "false"):
        return f"{key}={value}: expected {expected_form(kind)}"
    if kind is int:
        try:
            int(text)
        except ValueError:
            return f"{key}={value}: expected {expected_form(kind)}"
    return None


def did_you_mean(key: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known key (case-insensitive), or ``""``."""
    names = list(known)
    by_lower = {n.lower(): n for n in names}
    if key.lower() in by_lower:
        return f" (did you mean '{by_lower[key.lower()]}'?)"
    close = difflib.get_close_matches(key.lower(), list(by_lower), n=1, cutoff=0.75)
    return f" (did you mean '{by_lower[close[0]]}'?)" if close else ""
