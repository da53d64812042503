package chaos

import (
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// QueueDelivery proves the delivery invariants of a queue from its put,
// take and ack operations (Key = item, put Arg = the producer's sequence
// number):
//
//   - every acknowledged put is taken at least once (nothing is lost; the
//     workload drains the queue before it stops);
//   - nothing is taken that was never put;
//   - no item is acknowledged twice, and no item is taken again after it
//     was acknowledged (a claimed item may be delivered again only when its
//     consumer died before acking it);
//   - per producer, first deliveries follow put order: an item is never
//     first taken after a later item of the same producer was taken
//     before the earlier one's take was even invoked.
func QueueDelivery() Checker {
	return Checker{
		Name:      "queue-delivery",
		Invariant: "every acked put is taken, none twice after ack, none invented, in order per producer",
		Check:     checkQueue,
	}
}

func checkQueue(h History) Result {
	var v violations
	type item struct {
		producer string
		seq      int64
		putOK    bool
		putCall  int64
		takes    []Operation
		acks     int
		ackTime  int64
	}
	items := map[string]*item{}
	get := func(k string) *item {
		if items[k] == nil {
			items[k] = &item{}
		}
		return items[k]
	}
	ops := Operations(h)
	for _, o := range ops {
		switch o.Fn {
		case FnPut:
			it := get(o.Key)
			it.producer, it.seq, it.putCall = o.Client, o.Arg, o.Call
			it.putOK = o.Result == KindOK
		}
	}
	for _, o := range ops {
		if o.Result != KindOK {
			continue
		}
		switch o.Fn {
		case FnTake:
			if o.OutKey == "" {
				continue // empty queue
			}
			it, ok := items[o.OutKey]
			if !ok {
				v.add(o.Return, o.Client, "took %s, which nobody put", o.OutKey)
				continue
			}
			if it.acks > 0 && o.Call > it.ackTime {
				v.add(o.Return, o.Client, "took %s again after it was acked", o.OutKey)
			}
			it.takes = append(it.takes, o)
		case FnAck:
			it := get(o.Key)
			it.acks++
			if it.acks == 2 {
				v.add(o.Return, o.Client, "item %s acked twice", o.Key)
			}
			if it.acks == 1 {
				it.ackTime = o.Return
			}
		}
	}
	keys := make([]string, 0, len(items))
	for k := range items {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	byProducer := map[string][]*item{}
	for _, k := range keys {
		it := items[k]
		if it.putOK && len(it.takes) == 0 {
			v.add(h.End, it.producer, "item %s (put by %s, #%d) was never taken", k, it.producer, it.seq)
		}
		if it.producer != "" && len(it.takes) > 0 {
			byProducer[it.producer] = append(byProducer[it.producer], it)
		}
	}
	for p, its := range byProducer {
		sort.Slice(its, func(i, j int) bool { return its[i].seq < its[j].seq })
		for i := range its {
			for j := i + 1; j < len(its); j++ {
				a, b := its[i].takes[0], its[j].takes[0]
				if b.Return < a.Call {
					v.add(b.Return, b.Client, "producer %s: item #%d taken before item #%d was asked for", p, its[j].seq, its[i].seq)
				}
			}
		}
	}
	return v.result(len(ops))
}

// QueueLinearizable proves, with porcupine, that put and take operations
// form a linearizable history of a FIFO queue that starts empty: a take
// returns the oldest item (or "" when empty), a put of unknown outcome was
// enqueued once or never. For queues without redelivery (no ack). A search
// that does not finish within timeout is inconclusive.
func QueueLinearizable(timeout time.Duration) Checker {
	return Checker{
		Name:      "queue-linearizable",
		Invariant: "puts and takes are linearizable as a FIFO queue (porcupine)",
		Check:     func(h History) Result { return checkQueueLin(h, timeout) },
	}
}

type queueInput struct {
	put     bool
	item    string
	outcome Kind
}

// queueState is an immutable FIFO: a string of items joined by "\x00".
type queueState []string

var queueModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{queueState(nil)} },
	Step: func(state, input, output any) []any {
		s, in := state.(queueState), input.(queueInput)
		if in.put {
			next := append(append(queueState(nil), s...), in.item)
			if in.outcome == KindUnknown {
				return []any{next, s}
			}
			return []any{next}
		}
		switch in.outcome {
		case KindOK:
			got := output.(string)
			if got == "" {
				if len(s) == 0 {
					return []any{s}
				}
				return nil
			}
			if len(s) > 0 && s[0] == got {
				return []any{s[1:]}
			}
			return nil
		default: // unknown take: removed the head, or nothing
			if len(s) > 0 {
				return []any{s[1:], s}
			}
			return []any{s}
		}
	},
	Equal: func(a, b any) bool {
		x, y := a.(queueState), b.(queueState)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	},
	DescribeOperation: func(input, output any) string {
		in := input.(queueInput)
		if in.put {
			return fmt.Sprintf("put %s: %s", in.item, in.outcome)
		}
		return fmt.Sprintf("take -> %q: %s", output, in.outcome)
	},
}

func checkQueueLin(h History, timeout time.Duration) Result {
	var ops []porcupine.Operation
	clients := map[string]int{}
	for _, o := range Operations(h) {
		if (o.Fn != FnPut && o.Fn != FnTake) || o.Result == KindFail {
			continue
		}
		id, ok := clients[o.Client]
		if !ok {
			id = len(clients)
			clients[o.Client] = id
		}
		ops = append(ops, porcupine.Operation{
			ClientId: id,
			Input:    queueInput{put: o.Fn == FnPut, item: o.Key, outcome: o.Result},
			Call:     o.Call, Output: o.OutKey, Return: o.Return,
		})
	}
	r := Result{Checked: len(ops)}
	if len(ops) == 0 {
		return r
	}
	switch porcupine.CheckOperationsTimeout(queueModel.ToModel(), ops, timeout) {
	case porcupine.Illegal:
		r.Violations = []Violation{{Time: h.End, Msg: "puts and takes are not linearizable as a FIFO queue"}}
	case porcupine.Unknown:
		r.Inconclusive = true
		r.Note = fmt.Sprintf("linearizability search timed out after %v", timeout)
	}
	return r
}
