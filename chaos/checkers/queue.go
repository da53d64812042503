package checkers

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// QueueDelivery proves the delivery invariants of a claim-and-ack queue
// from its put, take and ack operations (Key = item, put Arg = the
// producer's sequence number) and its claim holdings (mode "claim", Key =
// item: from Claim's return to the ack's or release's return, or to the
// moment the claim may be lost):
//
//   - consumed means acked: every acknowledged put, and every item ever
//     taken (whatever its put's outcome), is acked by an ack that returned
//     ok or whose outcome is unknown. An item whose consumer died before
//     acking must therefore be delivered again and acked (the workload
//     drains the queue before it stops);
//   - no two claims of one item are live at the same instant;
//   - a claim ends by its owner's ack or release, or with its owner's
//     session: one lost to a delete (recipes.ErrNodeDeleted in the loss)
//     before its owner asked to ack it was deleted by someone else while it
//     lived, and its item may be delivered again under it;
//   - nothing is taken that was never put;
//   - no item is acknowledged twice, and no item is taken again after it
//     was acknowledged;
//   - per producer, first deliveries follow put order: an item is never
//     first taken after a later item of the same producer was taken
//     before the earlier one's take was even invoked, unless a take that
//     did not return ok may have held the earlier item's claim then: one
//     invoked after the earlier item's put was invoked and before the later
//     item's take returned (a failed or cancelled take's claim can outlive
//     its return until its background delete or its session's end, and
//     consumers skip claimed items).
func QueueDelivery() Checker {
	return Checker{
		Name:      "queue-delivery",
		Invariant: "every acked put and every claimed item is acked; one live claim per item, ended only by its owner or its session; none twice after ack, none invented, in order per producer",
		Check:     checkQueue,
	}
}

func checkQueue(h history.History) Result {
	var v violations
	type item struct {
		producer string
		seq      int64
		putOK    bool
		putCall  int64
		takes    []history.Operation
		acks     int  // ok
		ackMaybe bool // an ack of unknown outcome
		ackTime  int64
	}
	items := map[string]*item{}
	get := func(k string) *item {
		if items[k] == nil {
			items[k] = &item{}
		}
		return items[k]
	}
	ops := history.Operations(h)
	var failedTakes []history.Operation // takes that did not return ok
	for _, o := range ops {
		if o.Fn == history.FnTake && o.Result != history.KindOK {
			failedTakes = append(failedTakes, o)
		}
		if o.Fn == history.FnPut {
			it := get(o.Key)
			it.producer, it.seq = o.Client, o.Arg
			it.putOK = o.Result == history.KindOK
			it.putCall = o.Call
		}
	}
	for _, o := range ops {
		if o.Fn == history.FnAck && o.Result == history.KindUnknown {
			get(o.Key).ackMaybe = true
		}
		if o.Result != history.KindOK {
			continue
		}
		switch o.Fn {
		case history.FnTake:
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
		case history.FnAck:
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
	stolenClaims(h, &v)
	var claims []history.Holding
	for _, x := range history.Holdings(h) {
		if x.Mode == "claim" {
			claims = append(claims, x)
		}
	}
	for key, cs := range byKey(claims) {
		live := map[int]bool{}
		for _, e := range sweep(cs) {
			if !e.start {
				delete(live, e.i)
				continue
			}
			for j := range live {
				a, b := cs[j], cs[e.i]
				v.add(e.t, b.Client, "two live claims on %s at %s: %s since %s and %s", key, history.Rel(h, e.t), a.Client, history.Rel(h, a.From), b.Client)
			}
			live[e.i] = true
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
		consumed := it.acks > 0 || it.ackMaybe
		switch {
		case consumed:
		case it.putOK && len(it.takes) == 0:
			v.add(h.End, it.producer, "item %s (put by %s, #%d) was never taken, never acked", k, it.producer, it.seq)
		case it.putOK || len(it.takes) > 0:
			last := it.takes[len(it.takes)-1]
			v.add(h.End, last.Client, "item %s (put by %s, #%d) was taken %d time(s), last by %s at %s, and never acked",
				k, it.producer, it.seq, len(it.takes), last.Client, history.Rel(h, last.Return))
		}
		if it.producer != "" && len(it.takes) > 0 {
			byProducer[it.producer] = append(byProducer[it.producer], it)
		}
	}
	// mayHoldClaim reports whether a take that did not return ok may have
	// held the claim on an item put at put while a take returning at ret
	// listed the queue.
	mayHoldClaim := func(put, ret int64) bool {
		for _, t := range failedTakes {
			if t.Call < ret && (t.Result == history.KindUnknown || t.Return > put) {
				return true
			}
		}
		return false
	}
	for p, its := range byProducer {
		sort.Slice(its, func(i, j int) bool { return its[i].seq < its[j].seq })
		for i := range its {
			for j := i + 1; j < len(its); j++ {
				a, b := its[i].takes[0], its[j].takes[0]
				if b.Return < a.Call && !mayHoldClaim(its[i].putCall, b.Return) {
					v.add(b.Return, b.Client, "producer %s: item #%d taken before item #%d was asked for", p, its[j].seq, its[i].seq)
				}
			}
		}
	}
	return v.result(len(ops))
}

// stolenClaims adds a violation for every claim lost to a delete
// (recipes.ErrNodeDeleted in the loss's detail) while its owner held it and
// had not invoked its ack: no client but the owner may delete a live claim
// node, and the owner's own delete is its ack or its release, which
// ends the holding first.
func stolenClaims(h history.History, v *violations) {
	type ck struct{ client, key string }
	live := map[ck]bool{}
	for _, e := range h.Events {
		k := ck{e.Client, e.Key}
		switch {
		case e.Kind == history.KindAcquired && e.Mode == "claim":
			live[k] = true
		case e.Kind == history.KindInvoke && e.Fn == history.FnAck, e.Kind == history.KindReleased:
			delete(live, k)
		case e.Kind == history.KindLost:
			if live[k] && strings.Contains(e.Detail, recipes.ErrNodeDeleted.Error()) {
				v.add(e.Time, e.Client, "claim on %s deleted by another client while %s held it (%s)", e.Key, e.Client, e.Detail)
			}
			delete(live, k)
		}
	}
}

// QueueLinearizable proves, with porcupine, that put and take operations
// form a linearizable history of a FIFO queue that starts empty: a take
// returns the oldest item (or "" when empty), a put of unknown outcome was
// enqueued once or never. For queues without redelivery (no ack). A search
// that does not finish within timeout is a violation: nothing was proven.
func QueueLinearizable(timeout time.Duration) Checker {
	return Checker{
		Name:      "queue-linearizable",
		Invariant: "puts and takes are linearizable as a FIFO queue (porcupine)",
		Check:     func(h history.History) Result { return checkQueueLin(h, timeout) },
	}
}

type queueInput struct {
	put     bool
	item    string
	outcome history.Kind
}

// queueState is an immutable FIFO: a string of items joined by "\x00".
type queueState []string

var queueModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{queueState(nil)} },
	Step: func(state, input, output any) []any {
		s, in := state.(queueState), input.(queueInput)
		if in.put {
			next := append(append(queueState(nil), s...), in.item)
			if in.outcome == history.KindUnknown {
				return []any{next, s}
			}
			return []any{next}
		}
		switch in.outcome {
		case history.KindOK:
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

func checkQueueLin(h history.History, timeout time.Duration) Result {
	var ops []porcupine.Operation
	clients := map[string]int{}
	for _, o := range history.Operations(h) {
		if (o.Fn != history.FnPut && o.Fn != history.FnTake) || o.Result == history.KindFail {
			continue
		}
		id, ok := clients[o.Client]
		if !ok {
			id = len(clients)
			clients[o.Client] = id
		}
		ops = append(ops, porcupine.Operation{
			ClientId: id,
			Input:    queueInput{put: o.Fn == history.FnPut, item: o.Key, outcome: o.Result},
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
		r.Violations = []Violation{{Time: h.End, Msg: fmt.Sprintf("linearizability search (%d operations) timed out after %v: nothing proven", len(ops), timeout)}}
	}
	return r
}
