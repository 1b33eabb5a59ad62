'use strict';
/*
 * Drive the Node.js RocketMQ client ali-ons 3.12.0 against our name server and broker; report JSON lines on stdout.
 *
 *   node driver.js produce NAMESRV TOPIC PREFIX COUNT
 *       sends COUNT messages: tags TagA/TagB/TagC in turn, keys PREFIX-key-i, body PREFIX-body-i, user properties
 *       seq=i and origin=ons; prints {"event":"sent",...} per send and {"event":"done","ok":N}
 *   node driver.js consume NAMESRV TOPIC GROUP EXPR WANT [FAIL_KEY]
 *       a push consumer (CONSUME_FROM_FIRST_OFFSET) with subscription EXPR; prints {"event":"msg",...} per message
 *       until WANT distinct keys were consumed, then {"event":"done"} and exits. FAIL_KEY's first delivery throws
 *       (ali-ons then sends it back for a retry).
 *
 * ali-ons needs the topic to exist (it does not auto-create through TBW102); the test creates it first.
 */
const urllib = require('urllib');
const { Producer, Consumer, Message } = require('ali-ons');

const TAGS = ['TagA', 'TagB', 'TagC'];
const emit = obj => process.stdout.write(JSON.stringify(obj) + '\n');
// credentials: ONS_AK / ONS_SK from the environment (ACL tests), else ali-ons' placeholder pair
const common = nameSrv => ({
  httpclient: urllib, accessKeyId: process.env.ONS_AK || 'ak', accessKeySecret: process.env.ONS_SK || 'sk', nameSrv,
});

async function produce(nameSrv, topic, prefix, count) {
  const producer = new Producer(Object.assign({ producerGroup: 'PID_ons_compat' }, common(nameSrv)));
  await producer.ready();
  let ok = 0;
  for (let i = 0; i < count; i++) {
    const msg = new Message(topic, TAGS[i % TAGS.length], `${prefix}-body-${i}`);
    msg.keys = [`${prefix}-key-${i}`];
    msg.properties.seq = String(i);
    msg.properties.origin = 'ons';
    const r = await producer.send(msg);
    if (r.sendStatus === 'SEND_OK') ok++;
    emit({ event: 'sent', seq: i, status: r.sendStatus, msgId: r.msgId, queueId: r.messageQueue.queueId });
  }
  await producer.close();
  emit({ event: 'done', ok });
}

async function consume(nameSrv, topic, group, expr, want, failKey) {
  const consumer = new Consumer(Object.assign({ consumerGroup: group, consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET' },
    common(nameSrv)));
  const keys = new Set();
  let finished = false;
  consumer.on('error', err => emit({ event: 'error', error: String(err).slice(0, 300) }));
  consumer.subscribe(topic, expr, async msg => {
    const key = (msg.keys || '').split(' ')[0]; // the KEYS property: keys joined by spaces
    const fields = {
      topic: msg.topic, tags: msg.tags, keys: key, body: msg.body.toString(), msgId: msg.msgId,
      reconsumeTimes: msg.reconsumeTimes, queueId: msg.queueId, queueOffset: msg.queueOffset,
      props: { seq: msg.properties.seq, origin: msg.properties.origin },
    };
    if (failKey && key === failKey && msg.reconsumeTimes === 0) {
      emit(Object.assign({ event: 'failed' }, fields));
      throw new Error('fail the first delivery');
    }
    emit(Object.assign({ event: 'msg' }, fields));
    keys.add(key);
    if (keys.size >= want && !finished) {
      finished = true;
      setImmediate(async () => {
        await consumer.close();
        emit({ event: 'done', distinct: keys.size });
        process.exit(0);
      });
    }
  });
  await consumer.ready();
  emit({ event: 'started' });
}

const [cmd, ...args] = process.argv.slice(2);
const run = cmd === 'produce'
  ? produce(args[0], args[1], args[2], Number(args[3]))
  : consume(args[0], args[1], args[2], args[3], Number(args[4]), args[5]);
run.catch(err => { emit({ event: 'fatal', error: String(err && err.stack || err).slice(0, 1000) }); process.exit(2); });
