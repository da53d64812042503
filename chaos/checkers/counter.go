package checkers

import (
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// CounterLinearizable proves, with porcupine, that the additions
// (history.FnAdd) to every key form a linearizable history of a counter
// that starts at 0: an addition that succeeded found the counter at its
// result minus its delta and left it at its result, at some instant
// between its call and its return; one of unknown outcome took effect once,
// at some instant after its call, or never; a failed one took no effect
// (so it constrains nothing and is left out). An increment counted once and
// applied twice (a write whose answer was lost, sent again) shows as a
// counter that moves with no addition to account for it. Keys, the cap on
// operations and the timeout are as for Linearizable.
func CounterLinearizable(timeout time.Duration) Checker {
	return Checker{
		Name:      "counter-linearizable",
		Invariant: "counter additions are linearizable (porcupine)",
		Check:     func(h history.History) Result { return checkCounter(h, timeout) },
	}
}

// counterInput is a porcupine input: an addition of delta to key.
type counterInput struct {
	key     string
	delta   int64
	outcome history.Kind
}

var counterModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{int64(0)} },
	Step: func(state, input, output any) []any {
		s, in := state.(int64), input.(counterInput)
		if in.outcome == history.KindOK {
			if out := output.(int64); s+in.delta == out {
				return []any{out}
			}
			return nil
		}
		return []any{s + in.delta, s} // unknown: took effect, or not
	},
	DescribeOperation: func(input, output any) string {
		in := input.(counterInput)
		if in.outcome == history.KindOK {
			return fmt.Sprintf("add %s %+d -> %d", in.key, in.delta, output)
		}
		return fmt.Sprintf("add %s %+d: %s", in.key, in.delta, in.outcome)
	},
}

func checkCounter(h history.History, timeout time.Duration) Result {
	byKey := map[string][]porcupine.Operation{}
	var keys []string
	clients := map[string]int{}
	for _, o := range history.Operations(h) {
		if o.Fn != history.FnAdd || o.Result == history.KindFail {
			continue
		}
		id, ok := clients[o.Client]
		if !ok {
			id = len(clients)
			clients[o.Client] = id
		}
		if _, ok := byKey[o.Key]; !ok {
			keys = append(keys, o.Key)
		}
		byKey[o.Key] = append(byKey[o.Key], porcupine.Operation{
			ClientId: id,
			Input:    counterInput{key: o.Key, delta: o.Arg, outcome: o.Result},
			Call:     o.Call, Output: o.Out, Return: o.Return,
		})
	}
	r := Result{}
	var notes []string
	for _, k := range keys {
		kops := capOps(byKey[k], MaxLinearizableOps)
		r.Checked += len(kops)
		r.Of += len(byKey[k])
		if len(kops) < len(byKey[k]) {
			notes = append(notes, fmt.Sprintf("%s: first %d of %d operations checked (cap %d)", k, len(kops), len(byKey[k]), MaxLinearizableOps))
		}
		res, info := porcupine.CheckOperationsVerbose(counterModel.ToModel(), kops, timeout)
		switch res {
		case porcupine.Illegal:
			if r.Visual == nil {
				r.Visual = visualize(counterModel.ToModel(), info)
			}
			r.Violations = append(r.Violations, Violation{Time: h.End, Msg: "not linearizable: " + k + ": " + describeLongestWith(h, info, counterModel.DescribeOperation)})
		case porcupine.Unknown:
			r.Inconclusive = true
			r.Violations = append(r.Violations, Violation{Time: h.End,
				Msg: fmt.Sprintf("linearizability search of %s (%d operations) timed out after %v: nothing proven", k, len(kops), timeout)})
		}
	}
	r.Note = strings.Join(notes, "; ")
	if r.Of == r.Checked {
		r.Of = 0 // nothing capped
	}
	return r
}
