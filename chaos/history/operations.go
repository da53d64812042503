package history

import "math"

// Operation is an invoke event joined with its completion.
type Operation struct {
	Client string
	ID     int64
	Fn     Fn
	Key    string // input key
	Arg    int64  // input
	In     int64  // second input (new value of a CAS)
	Call   int64  // time of the invoke
	Return int64  // time of the completion; math.MaxInt64 when unknown
	Result Kind   // KindOK, KindFail or KindUnknown
	OutKey string // output key (item taken)
	Out    int64  // output value
	Detail string
}

// Operations joins every invoke of h with its completion, in invoke order.
// An invoke without a completion (the workload stopped first) is unknown.
// An unknown operation may take effect at any time after its call, so its
// Return is math.MaxInt64.
func Operations(h History) []Operation {
	var out []Operation
	at := map[int64]int{}
	for _, e := range h.Events {
		switch e.Kind {
		case KindInvoke:
			at[e.Op] = len(out)
			out = append(out, Operation{
				Client: e.Client, ID: e.Op, Fn: e.Fn, Key: e.Key, Arg: e.Arg, In: e.Value,
				Call: e.Time, Return: math.MaxInt64, Result: KindUnknown,
			})
		case KindOK, KindFail, KindUnknown:
			i, ok := at[e.Op]
			if !ok {
				continue
			}
			o := &out[i]
			o.Result, o.Detail = e.Kind, e.Detail
			if e.Kind != KindUnknown {
				o.Return = e.Time
			}
			if e.Kind == KindOK {
				o.OutKey, o.Out = e.Key, e.Value
			}
		}
	}
	return out
}
