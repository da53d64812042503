package checkers

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Linearizable proves, with porcupine, that the compare-and-set operations
// of every key form a linearizable history of an integer register that
// starts at 0: each successful cas found its expected value (Arg) and wrote
// its new one (In), each failed cas found another value, and each cas of
// unknown outcome either took effect once, at some instant after its call,
// or never. A fenced cas (history.FnFencedCAS) is a cas whose failure may
// come from its fence instead of the value, so its failure constrains nothing. ZooKeeper orders every write through its leader, so writes are
// linearizable; plain reads are not (a follower may serve a value another
// client has already overwritten), so reads are left to SessionReads.
//
// Each key is searched on its own, and on at most MaxLinearizableOps of its
// operations: past that many, the history is cut at the first instant when
// every operation called before it (but those of unknown outcome) has
// returned, and only the operations called before the cut are checked (the
// result's note says so). Such a prefix is linearizable whenever the whole
// history is, so the cut never invents a violation. A search that does not
// finish within timeout is a violation: nothing was proven.
func Linearizable(timeout time.Duration) Checker {
	return Checker{
		Name:      "linearizable",
		Invariant: "register compare-and-sets are linearizable (porcupine)",
		Check:     func(h history.History) Result { return checkRegister(h, timeout, false) },
	}
}

// LinearizableReads is Linearizable with reads included: for stores whose
// reads are meant to be linearizable (ZooKeeper's are only after a sync).
func LinearizableReads(timeout time.Duration) Checker {
	return Checker{
		Name:      "linearizable-reads",
		Invariant: "register reads and compare-and-sets are linearizable (porcupine)",
		Check:     func(h history.History) Result { return checkRegister(h, timeout, true) },
	}
}

// registerInput is a porcupine input: a read, or a cas from Arg to In.
type registerInput struct {
	key     string
	cas     bool
	from    int64
	to      int64
	outcome history.Kind
}

var registerModel = porcupine.NondeterministicModel{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		m := map[string][]porcupine.Operation{}
		var keys []string
		for _, o := range ops {
			k := o.Input.(registerInput).key
			if _, ok := m[k]; !ok {
				keys = append(keys, k)
			}
			m[k] = append(m[k], o)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, m[k])
		}
		return out
	},
	Init: func() []any { return []any{int64(0)} },
	Step: func(state, input, output any) []any {
		s, in := state.(int64), input.(registerInput)
		if !in.cas {
			if output.(int64) == s {
				return []any{s}
			}
			return nil
		}
		switch in.outcome {
		case history.KindOK:
			if s == in.from {
				return []any{in.to}
			}
			return nil
		case history.KindFail:
			if s != in.from {
				return []any{s}
			}
			return nil
		default: // unknown: took effect, or not
			if s == in.from {
				return []any{in.to, s}
			}
			return []any{s}
		}
	},
	DescribeOperation: func(input, output any) string {
		in := input.(registerInput)
		if !in.cas {
			return fmt.Sprintf("read %s -> %d", in.key, output)
		}
		return fmt.Sprintf("cas %s %d->%d: %s", in.key, in.from, in.to, in.outcome)
	},
}

// MaxLinearizableOps bounds the operations per key that Linearizable and
// LinearizableReads search (see Linearizable).
const MaxLinearizableOps = 3000

// capOps returns the longest prefix of ops (in call order) that holds at
// least max operations and ends where nothing but operations of unknown
// outcome is in flight, or all of ops when no such cut exists.
func capOps(ops []porcupine.Operation, max int) []porcupine.Operation {
	var returned int64
	for i, o := range ops {
		if i >= max && o.Call > returned {
			return ops[:i]
		}
		if o.Return != math.MaxInt64 && o.Return > returned {
			returned = o.Return
		}
	}
	return ops
}

func checkRegister(h history.History, timeout time.Duration, reads bool) Result {
	var ops []porcupine.Operation
	clients := map[string]int{}
	for _, o := range history.Operations(h) {
		if o.Fn != history.FnCAS && o.Fn != history.FnFencedCAS && (o.Fn != history.FnRead || !reads) {
			continue
		}
		if o.Fn == history.FnFencedCAS && o.Result == history.KindFail {
			continue // rejected by its fence or by the value: no effect, and no clue which
		}
		if o.Fn == history.FnRead && o.Result != history.KindOK {
			continue // a read without a value constrains nothing
		}
		id, ok := clients[o.Client]
		if !ok {
			id = len(clients)
			clients[o.Client] = id
		}
		ops = append(ops, porcupine.Operation{
			ClientId: id,
			Input:    registerInput{key: o.Key, cas: o.Fn != history.FnRead, from: o.Arg, to: o.In, outcome: o.Result},
			Call:     o.Call, Output: o.Out, Return: o.Return,
		})
	}
	byKey := map[string][]porcupine.Operation{}
	var keys []string
	for _, o := range ops {
		k := o.Input.(registerInput).key
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], o)
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
		res, info := porcupine.CheckOperationsVerbose(registerModel.ToModel(), kops, timeout)
		switch res {
		case porcupine.Illegal:
			if r.Visual == nil {
				r.Visual = visualize(registerModel.ToModel(), info)
			}
			r.Violations = append(r.Violations, Violation{Time: h.End, Msg: "not linearizable: " + k + ": " + describeLongest(h, info)})
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

// visualize returns porcupine's visualisation of info, or nil when it
// cannot render it.
func visualize(m porcupine.Model, info porcupine.LinearizationInfo) []byte {
	var b bytes.Buffer
	if err := porcupine.Visualize(m, info, &b); err != nil {
		return nil
	}
	return b.Bytes()
}

// describeLongest names where the longest linearizable prefix stops.
func describeLongest(h history.History, info porcupine.LinearizationInfo) string {
	return describeLongestWith(h, info, registerModel.DescribeOperation)
}

// describeLongestWith is describeLongest for any model's operations.
func describeLongestWith(h history.History, info porcupine.LinearizationInfo, describe func(input, output any) string) string {
	parts := info.PartialLinearizationsOperations()
	best := []porcupine.Operation(nil)
	for _, p := range parts {
		for _, lin := range p {
			if len(lin) > len(best) {
				best = lin
			}
		}
	}
	if len(best) == 0 {
		return "no operation linearizes"
	}
	last := best[len(best)-1]
	return fmt.Sprintf("longest linearizable prefix has %d operations, ending with %s at %s",
		len(best), describe(last.Input, last.Output), history.Rel(h, last.Call))
}
