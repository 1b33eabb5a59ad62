// Command driver drives the official Go client (rocketmq-client-go/v2) for tests/reference: one JSON command a line
// on stdin, JSON lines on stdout describing what the client observed, then {"event":"done"} per command. Commands:
//
//	{"cmd":"send","ns":ADDR,"group":G,"topic":T,"count":N,"mode":"sync|async|oneway|batch","prefix":P,"tags":"A,B"}
//	{"cmd":"consume","ns":ADDR,"group":G,"topic":T,"expr":"*","expect":N,"timeoutMs":MS}
//	{"cmd":"rebalance","ns":ADDR,"group":G,"topic":T,"consumers":N,"count":N,"queues":Q}
//
// A batch send puts the count messages in one SendSync call and reports one "sent" event for them.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

type command struct {
	Cmd       string `json:"cmd"`
	Ns        string `json:"ns"`
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Count     int    `json:"count"`
	Mode      string `json:"mode"`
	Prefix    string `json:"prefix"`
	Tags      string `json:"tags"`
	Expr      string `json:"expr"`
	Expect    int    `json:"expect"`
	TimeoutMs int    `json:"timeoutMs"`
	Consumers int    `json:"consumers"`
	Queues    int    `json:"queues"`
}

var (
	outMu     sync.Mutex
	instances atomic.Int64
)

func emit(fields map[string]any) {
	line, _ := json.Marshal(fields)
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(line, '\n'))
}

func instance() string {
	return "refgo-" + strconv.FormatInt(instances.Add(1), 10)
}

func sendStatus(s primitive.SendStatus) string {
	return [...]string{"SEND_OK", "FLUSH_DISK_TIMEOUT", "FLUSH_SLAVE_TIMEOUT", "SLAVE_NOT_AVAILABLE", "SEND_UNKNOWN_ERROR"}[s]
}

func sent(r *primitive.SendResult) {
	emit(map[string]any{"event": "sent", "status": sendStatus(r.Status), "queueId": r.MessageQueue.QueueId,
		"queueOffset": r.QueueOffset, "hasMsgId": r.MsgID != "", "hasOffsetMsgId": r.OffsetMsgID != ""})
}

func fail(err error) {
	emit(map[string]any{"event": "error", "type": fmt.Sprintf("%T", err), "remark": err.Error()})
}

func message(c *command, i int) *primitive.Message {
	prefix := c.Prefix
	if prefix == "" {
		prefix = "m"
	}
	tags := strings.Split(c.Tags, ",")
	if c.Tags == "" {
		tags = []string{"TagA", "TagB", "TagC"}
	}
	m := primitive.NewMessage(c.Topic, []byte(fmt.Sprintf("%s-body-%d", prefix, i)))
	m.WithTag(tags[i%len(tags)])
	m.WithKeys([]string{fmt.Sprintf("%s-key-%d", prefix, i)})
	m.WithProperty("seq", strconv.Itoa(i))
	return m
}

func send(c *command) error {
	p, err := rocketmq.NewProducer(producer.WithNameServer([]string{c.Ns}), producer.WithRetry(0),
		producer.WithGroupName(c.Group), producer.WithInstanceName(instance()),
		producer.WithSendMsgTimeout(10*time.Second))
	if err != nil {
		return err
	}
	if err := p.Start(); err != nil {
		return err
	}
	defer p.Shutdown()
	if c.Mode == "batch" {
		msgs := make([]*primitive.Message, 0, c.Count)
		for i := 0; i < c.Count; i++ {
			msgs = append(msgs, message(c, i))
		}
		r, err := p.SendSync(context.Background(), msgs...)
		if err != nil {
			fail(err)
			return nil
		}
		sent(r)
		return nil
	}
	var wg sync.WaitGroup
	for i := 0; i < c.Count; i++ {
		m := message(c, i)
		switch c.Mode {
		case "sync", "":
			r, err := p.SendSync(context.Background(), m)
			if err != nil {
				fail(err)
				continue
			}
			sent(r)
		case "oneway":
			if err := p.SendOneWay(context.Background(), m); err != nil {
				fail(err)
			}
		case "async":
			wg.Add(1)
			err := p.SendAsync(context.Background(), func(_ context.Context, r *primitive.SendResult, err error) {
				defer wg.Done()
				if err != nil {
					fail(err)
					return
				}
				sent(r)
			}, m)
			if err != nil {
				wg.Done()
				fail(err)
			}
		default:
			return fmt.Errorf("mode %q", c.Mode)
		}
	}
	wg.Wait()
	return nil
}

func consume(c *command) error {
	expr := c.Expr
	if expr == "" {
		expr = "*"
	}
	pc, err := rocketmq.NewPushConsumer(consumer.WithGroupName(c.Group), consumer.WithNameServer([]string{c.Ns}),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset), consumer.WithInstance(instance()),
		consumer.WithConsumeMessageBatchMaxSize(1))
	if err != nil {
		return err
	}
	var left atomic.Int64
	left.Store(int64(c.Expect))
	done := make(chan struct{})
	var once sync.Once
	err = pc.Subscribe(c.Topic, consumer.MessageSelector{Type: consumer.TAG, Expression: expr},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range msgs {
				emit(map[string]any{"event": "msg", "topic": m.Topic, "tags": m.GetTags(), "keys": m.GetKeys(),
					"body": string(m.Body), "queueId": m.Queue.QueueId, "queueOffset": m.QueueOffset,
					"reconsumeTimes": m.ReconsumeTimes, "props": m.GetProperties()})
				if left.Add(-1) <= 0 {
					once.Do(func() { close(done) })
				}
			}
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		return err
	}
	if err := pc.Start(); err != nil {
		return err
	}
	defer pc.Shutdown()
	timeout := c.TimeoutMs
	if timeout == 0 {
		timeout = 30000
	}
	select {
	case <-done:
	case <-time.After(time.Duration(timeout) * time.Millisecond):
		emit(map[string]any{"event": "timeout", "missing": left.Load()})
	}
	return nil
}

// rebalance starts c.Consumers push consumers of one group, waits until their allocations (AllocateByAveragely,
// observed through the strategy hook) cover the topic's queues evenly, consumes c.Count messages, shuts the last
// consumer down, waits for the others to take its queues over, consumes c.Count more; it emits the shares after
// each change and how many keys arrived once or more than once.
func rebalance(c *command) error {
	var mu sync.Mutex
	shares, peers, seen := map[int]int{}, map[int]int{}, map[string]int{}
	queues := c.Queues
	if queues == 0 {
		queues = 4
	}
	var pcs []rocketmq.PushConsumer
	defer func() {
		for _, pc := range pcs {
			pc.Shutdown()
		}
	}()
	for i := 0; i < c.Consumers; i++ {
		idx := i
		strategy := func(group, cid string, mqAll []*primitive.MessageQueue, cidAll []string) []*primitive.MessageQueue {
			got := consumer.AllocateByAveragely(group, cid, mqAll, cidAll)
			if len(mqAll) > 0 && mqAll[0].Topic == c.Topic {
				mu.Lock()
				shares[idx], peers[idx] = len(got), len(cidAll)
				mu.Unlock()
			}
			return got
		}
		pc, err := rocketmq.NewPushConsumer(consumer.WithGroupName(c.Group), consumer.WithNameServer([]string{c.Ns}),
			consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset), consumer.WithInstance(instance()),
			consumer.WithStrategy(strategy))
		if err != nil {
			return err
		}
		err = pc.Subscribe(c.Topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
			func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range msgs {
					seen[m.GetKeys()]++
				}
				return consumer.ConsumeSuccess, nil
			})
		if err != nil {
			return err
		}
		if err := pc.Start(); err != nil {
			return err
		}
		pcs = append(pcs, pc)
	}
	wait := func(done func() bool, fields map[string]any) bool {
		deadline := time.Now().Add(60 * time.Second)
		for {
			mu.Lock()
			ok := done()
			mu.Unlock()
			if ok {
				return true
			}
			if time.Now().After(deadline) {
				emit(fields)
				return false
			}
			time.Sleep(100 * time.Millisecond) // polling the consumers, bounded by the deadline
		}
	}
	settle := func(phase string) {
		var a []int
		done := func() bool {
			a = a[:0]
			sum, agreed := 0, true
			for i := range pcs {
				a = append(a, shares[i])
				sum += shares[i]
				agreed = agreed && peers[i] == len(pcs)
			}
			return agreed && sum == queues
		}
		if wait(done, map[string]any{"event": "timeout", "phase": phase}) {
			sort.Sort(sort.Reverse(sort.IntSlice(a)))
			emit(map[string]any{"event": "alloc", "phase": phase, "queues": a})
		}
	}
	round := func(prefix string, want int) error {
		s := *c
		s.Prefix, s.Group, s.Mode = prefix, c.Group+"P", "sync"
		if err := send(&s); err != nil {
			return err
		}
		wait(func() bool { return len(seen) >= want }, map[string]any{"event": "timeout", "phase": prefix})
		return nil
	}
	settle("joined")
	if err := round("r1", c.Count); err != nil {
		return err
	}
	pcs[len(pcs)-1].Shutdown()
	pcs = pcs[:len(pcs)-1]
	settle("left")
	if err := round("r2", 2*c.Count); err != nil {
		return err
	}
	mu.Lock()
	twice := 0
	for _, v := range seen {
		if v > 1 {
			twice++
		}
	}
	emit(map[string]any{"event": "received", "distinct": len(seen), "duplicated": twice})
	mu.Unlock()
	return nil
}

func main() {
	rlog.SetLogLevel("error")
	emit(map[string]any{"event": "ready"})
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		var c command
		err := json.Unmarshal([]byte(line), &c)
		if err == nil {
			switch c.Cmd {
			case "send":
				err = send(&c)
			case "consume":
				err = consume(&c)
			case "rebalance":
				err = rebalance(&c)
			default:
				err = fmt.Errorf("unknown cmd %q", c.Cmd)
			}
		}
		if err != nil {
			fail(err)
		}
		emit(map[string]any{"event": "done"})
	}
}
