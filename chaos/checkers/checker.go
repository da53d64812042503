package checkers

import (
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// Violation is one breach of an invariant found in a history.
type Violation struct {
	Time   int64  `json:"t"`
	Client string `json:"client,omitempty"`
	Msg    string `json:"msg"`
}

// Result is what a checker found in one history.
type Result struct {
	Checker string `json:"checker"`
	// Checked counts the items the checker examined (holdings, writes,
	// operations, fault windows...), to show it had something to check.
	Checked int `json:"checked"`
	// Of, when above Checked, counts the items there were to examine: the
	// checker examined only the first Checked of them (a capped check, as
	// the linearizability checkers are at MaxLinearizableOps per key).
	Of         int         `json:"of,omitempty"`
	Violations []Violation `json:"violations,omitempty"`
	// Inconclusive is set when the checker could not decide: the
	// linearizability search timed out (which those checkers also report
	// as a violation: nothing was proven), or the scenario was not
	// exercised enough (see Throughput).
	Inconclusive bool `json:"inconclusive,omitempty"`
	// Voided is set when the scenario's fault voids this invariant by
	// design; Expected then counts what would have been violations.
	Voided   bool   `json:"voided,omitempty"`
	VoidedBy string `json:"voided_by,omitempty"` // the fault that voids it
	Expected int    `json:"expected,omitempty"`
	Note     string `json:"note,omitempty"`
	// Took is how long the check ran (set by Checker.Run).
	Took time.Duration `json:"took"`
	// Visual is, for a linearizability violation, porcupine's
	// visualisation of the first key found not linearizable: an HTML page
	// of its operations and the longest linearizable prefixes.
	Visual []byte `json:"-"`
}

// Void turns r's violations into expected findings under fault.
func (r Result) Void(fault string) Result {
	r.Voided, r.VoidedBy, r.Expected = true, fault, len(r.Violations)
	if r.Expected > 0 {
		r.Note = fmt.Sprintf("%d finding(s) expected under %s, not counted: %s", r.Expected, fault, r.Violations[0].Msg)
	} else {
		r.Note = "voided by " + fault
	}
	r.Violations = nil
	return r
}

// Capped reports whether the checker examined only some of its items
// (Checked of Of).
func (r Result) Capped() bool { return r.Of > r.Checked }

// OK reports whether no violation was found.
func (r Result) OK() bool { return len(r.Violations) == 0 }

// Checker proves one invariant over a history. Check is a pure function.
type Checker struct {
	// Name is short and stable: it heads a column of the report.
	Name string
	// Invariant states, in a sentence, what a passing check proves.
	Invariant string
	Check     func(h history.History) Result
}

// Run applies c to h and names the result.
func (c Checker) Run(h history.History) Result {
	began := time.Now()
	r := c.Check(h)
	r.Checker, r.Took = c.Name, time.Since(began)
	return r
}

// maxViolations bounds the violations a checker lists; it counts the rest.
const maxViolations = 50

// violations accumulates violations up to maxViolations.
type violations struct {
	list    []Violation
	dropped int
}

func (v *violations) add(t int64, client, format string, args ...any) {
	if len(v.list) >= maxViolations {
		v.dropped++
		return
	}
	v.list = append(v.list, Violation{Time: t, Client: client, Msg: fmt.Sprintf(format, args...)})
}

func (v *violations) result(checked int) Result {
	r := Result{Checked: checked, Violations: v.list}
	if v.dropped > 0 {
		r.Note = fmt.Sprintf("%d more violations not listed", v.dropped)
	}
	return r
}
