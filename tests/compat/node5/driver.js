// Drives the Node.js RocketMQ 5.x client rocketmq-client-nodejs 1.0.8 (gRPC) for tests/compat/test_grpc_node_client.py,
// reporting JSON lines on stdout like grpc_driver.py.
//   node driver.js produce <endpoint> <topic> <prefix> <count> [<accessKey> <secretKey>]
//   node driver.js simple  <endpoint> <topic> <group> <count> [<accessKey> <secretKey>]
'use strict';
const { Producer, SimpleConsumer } = require('rocketmq-client-nodejs');

let sessionCredentials; // ACL credentials, when given

function emit(ev) {
  process.stdout.write(JSON.stringify(ev) + '\n');
}

async function produce(endpoints, topic, prefix, count) {
  const producer = new Producer({ endpoints, topics: [ topic ], sessionCredentials });
  await producer.startup();
  emit({ event: 'started' });
  for (let i = 0; i < count; i++) {
    const receipt = await producer.send({
      topic,
      tag: [ 'TagA', 'TagB', 'TagC' ][i % 3],
      keys: [ `${prefix}-key-${i}` ],
      body: Buffer.from(`${prefix}-body-${i}`),
      properties: new Map([[ 'seq', String(i) ], [ 'origin', 'node5' ]]),
    });
    emit({ event: 'sent', keys: `${prefix}-key-${i}`, id: receipt.messageId });
  }
  emit({ event: 'done', ok: count });
  await producer.shutdown();
  emit({ event: 'stopped' });
}

async function simple(endpoints, topic, group, count) {
  const consumer = new SimpleConsumer({
    consumerGroup: group,
    endpoints,
    subscriptions: new Map().set(topic, '*'),
    awaitDuration: 5000,
    sessionCredentials,
  });
  await consumer.startup();
  emit({ event: 'started' });
  let acked = 0;
  const deadline = Date.now() + 120000;
  while (acked < count && Date.now() < deadline) {
    const messages = await consumer.receive(16, 30000);
    for (const m of messages) {
      await consumer.ack(m);
      acked++;
      emit({
        event: 'msg', keys: m.keys[0], body: m.body.toString(), tag: m.tag, id: m.messageId,
        attempt: m.deliveryAttempt, props: Object.fromEntries(m.properties), corrupted: m.corrupted === true,
      });
    }
  }
  emit({ event: 'done', acked });
  await consumer.shutdown();
  emit({ event: 'stopped' });
}

const [ cmd, endpoint, topic, a, b, accessKey, accessSecret ] = process.argv.slice(2);
if (accessKey) {
  sessionCredentials = { accessKey, accessSecret };
}
const run = cmd === 'produce' ? produce(endpoint, topic, a, Number(b)) : simple(endpoint, topic, a, Number(b));
run.then(() => process.exit(0), err => {
  emit({ event: 'error', error: String(err && err.stack || err) });
  process.exit(1);
});
