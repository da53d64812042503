package history

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

// Kind is what an event records.
type Kind string

// Event kinds. A client operation is an invoke event followed by exactly one
// completion (ok, fail or unknown) with the same Op id; holdings, fenced
// writes and faults are single events.
const (
	// KindInvoke: a client is about to call Fn (Key, Arg are its input).
	KindInvoke Kind = "invoke"
	// KindOK: the operation returned success (Value, Key are its output).
	KindOK Kind = "ok"
	// KindFail: the operation definitely did not take effect.
	KindFail Kind = "fail"
	// KindUnknown: the outcome is ambiguous (connection lost mid-request):
	// it may or may not have taken effect, at any time after the invoke.
	KindUnknown Kind = "unknown"

	// KindAcquired: the client holds Key (lock, lease, leadership) from now
	// on, with fencing Token, in Mode ("" exclusive, "read", "write").
	KindAcquired Kind = "acquired"
	// KindReleased: the client is about to release Key; it no longer
	// believes it holds it.
	KindReleased Kind = "released"
	// KindLost: the client learnt that its holding of Key may be gone
	// (Detail says why); it no longer believes it holds it.
	KindLost Kind = "lost"

	// KindFencedOK: a fenced write with Token was accepted and wrote Value.
	KindFencedOK Kind = "fenced-accepted"
	// KindFencedRejected: ZooKeeper rejected a fenced write with Token.
	KindFencedRejected Kind = "fenced-rejected"

	// KindFaultStart and KindFaultEnd bracket a fault window (Key = fault
	// name, Detail = its parameters). The end is recorded once the fault is
	// healed: links restored and, for server faults, a quorum serves again.
	// A fault that could not be injected ends at once, its Detail
	// beginning with NotInjected: nothing was healed then (Healed).
	KindFaultStart Kind = "fault-start"
	KindFaultEnd   Kind = "fault-end"

	// KindNodesLeft: Value nodes (named in Detail) were found where none may
	// remain (after every client closed, or once a workload quiesced).
	KindNodesLeft Kind = "nodes-left"

	// KindReadBack: what the workload read back from ZooKeeper once every
	// client stopped (the ground truth an operation's client may not have
	// learnt). Fn says what was read: FnVote (Key = transaction, Detail =
	// site) or FnDecide (Key = transaction); Value is 1 commit, 0 abort, -1
	// absent. Token, when not 0, is the zxid that wrote what was read (the
	// decision node's creation, the vote node's last change): ZooKeeper's
	// order of the two.
	KindReadBack Kind = "read-back"
)

// Event kinds the runner records about faults and what clients went
// through, besides the workloads' own events.
const (
	// KindFaultTarget: the fault named Key struck the target in Detail (a
	// faults.Target as JSON), recorded right after it was injected.
	KindFaultTarget Kind = "fault-target"
	// KindZKLeader: the nemesis saw server Value lead the ensemble (-1: no
	// leader answered), before a fault and after its heal.
	KindZKLeader Kind = "zk-leader"
	// KindSession: the runner saw Client's session change state (Detail:
	// "suspended", "connected") or id (Detail "new", Value = the new id,
	// Arg = the id it replaced, which the ensemble expired): a suspension
	// or an expiry the client went through.
	KindSession Kind = "session"
	// KindServerMode: right before the heal of a fault that cut server
	// Value off from its peers, the nemesis asked it for its mode (srvr)
	// and got Detail: "leader", "follower", "not serving", or "no answer:"
	// and why. A cut server still leading or following then never left the
	// quorum: the cut did not take (see checkers.Exercised).
	KindServerMode Kind = "server-mode"
)

// Events of a workload that aims a step of its own at its faults (see
// checkers.Exercised): a fault window that the step missed tested nothing.
const (
	// KindAim: the workload aims the step Detail names at every window of
	// the fault Key names (of every fault when Key is ""). Recorded once
	// per fault, as the workload starts.
	KindAim Kind = "aim"
	// KindAimHit: the workload did its aimed step while the fault was on,
	// as the workload saw it (Detail says what, Value how many times).
	KindAimHit Kind = "aim-hit"
)

// Events and the operation of the two-phase workload besides the shared
// ones (see workloads.TwoPhase). Fn on a crash or resume event says whose
// it is: FnDecide the coordinator's, FnLearn a participant's.
const (
	// KindCrash: the workload closed Client's session on purpose in the
	// middle of transaction Key, as a process crash would (the session
	// ends, its liveness nodes go, nothing is finished); Detail says where:
	// "after begin", "after decide" (coordinator), "before vote", "after
	// vote" (participant). A new session of the same client follows.
	KindCrash Kind = "crash"
	// KindResume: the new session of a crashed Client took up transaction
	// Key. A coordinator: found it by Pending (Detail "pending") or resumed
	// the one it had decided before its crash (Detail "decided"), then
	// decides it (a decide operation follows). A participant: Run
	// delivered again a transaction it had not finished when it crashed
	// (Detail "voted commit", "voted abort" or "not voted"), which it
	// then votes in if it has not and learns (a learn operation follows).
	KindResume Kind = "resume"
	// FnBegin is the coordinator's Begin of transaction Key (ok Value 1).
	FnBegin Fn = "begin"
)

// Crash points of the two-phase workload (the Detail of a crash event).
const (
	CrashAfterBegin  = "after begin"
	CrashAfterDecide = "after decide"
	CrashBeforeVote  = "before vote"
	CrashAfterVote   = "after vote"
)

// Auditor is the Client name of events recorded by a workload's own checks
// once its clients stopped (read-backs, litter); RunnerClient that of the
// runner's checks. Neither is a workload client.
const (
	Auditor      = "audit"
	RunnerClient = "runner"
)

// Fn names a client operation. The vocabulary maps onto them: put,
// took (take), acked (ack), voted (vote), decided (decide), entered (enter),
// left (leave), passed (wait).
type Fn string

// Operations recorded by the workloads.
const (
	FnRead Fn = "read" // register read: ok Value = value read
	FnCAS  Fn = "cas"  // register compare-and-set: Arg expected, Value new
	// FnFencedCAS is a compare-and-set guarded by a fence as well: its
	// failure may come from the fence, so it says nothing of the value.
	FnFencedCAS Fn = "fenced-cas"
	// FnAdd adds Arg to a counter: ok Value = the counter after the add.
	FnAdd    Fn = "add"
	FnPut    Fn = "put"    // queue put: Key item, Arg producer sequence
	FnTake   Fn = "take"   // queue take: ok Key item ("" = empty queue)
	FnAck    Fn = "ack"    // queue ack of a claimed item: Key item
	FnVote   Fn = "vote"   // 2PC vote: Key transaction, Value 1 commit / 0 abort
	FnDecide Fn = "decide" // 2PC decision written by the coordinator
	FnLearn  Fn = "learn"  // 2PC outcome a participant ends with
	FnEnter  Fn = "enter"  // double barrier enter: Key barrier
	FnLeave  Fn = "leave"  // double barrier leave: Key barrier
	FnWait   Fn = "wait"   // barrier wait: ok = passed
	FnRemove Fn = "remove" // barrier removal
	// FnAcquire is a call that acquires Key (a lease of a semaphore): its
	// invoke marks when the acquisition began; ok Value is the token of
	// the holding, whose acquired event follows.
	FnAcquire Fn = "acquire"
	// FnSetMax sets the maximum of the semaphore Key to Arg (a shared
	// count's change); ok once the write is applied, unknown when its
	// answer was lost.
	FnSetMax Fn = "set-max"
)

// Nemesis is the Client name of events recorded by the fault injector.
const Nemesis = "nemesis"

// Quiesced is the Client name of the litter a workload finds once its
// clients stopped (KindNodesLeft).
const Quiesced = "quiesced"

// IsWorkloadClient reports whether events of client come from a workload
// client: not the nemesis, the runner, an audit or the quiesced litter.
// The liveness checker expects progress of exactly these clients, and the
// runner waits for it before it ends a scenario.
func IsWorkloadClient(client string) bool {
	return client != Nemesis && client != RunnerClient && client != Auditor && client != Quiesced && client != ""
}

// Event is one record of a history. Time is CLOCK_MONOTONIC nanoseconds
// (see Now); Seq orders events recorded at the same instant.
type Event struct {
	Seq    int64  `json:"seq"`
	Time   int64  `json:"t"`
	Client string `json:"client"`
	Kind   Kind   `json:"kind"`
	Op     int64  `json:"op,omitempty"`
	Fn     Fn     `json:"fn,omitempty"`
	Key    string `json:"key,omitempty"`
	Arg    int64  `json:"arg,omitempty"`
	Value  int64  `json:"value,omitempty"`
	Token  int64  `json:"token,omitempty"`
	Mode   string `json:"mode,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// History is everything recorded during one scenario, sorted by time.
type History struct {
	Scenario string  `json:"scenario"`
	Workload string  `json:"workload"`
	Fault    string  `json:"fault"`
	Seed     uint64  `json:"seed"`
	Clock    string  `json:"clock"`
	Start    int64   `json:"start"`
	End      int64   `json:"end"`
	Events   []Event `json:"events"`
}

// Sort orders the events by Time, then Seq.
func (h *History) Sort() {
	sort.SliceStable(h.Events, func(i, j int) bool {
		a, b := h.Events[i], h.Events[j]
		if a.Time != b.Time {
			return a.Time < b.Time
		}
		return a.Seq < b.Seq
	})
}

// Clients returns the names of the clients that recorded operations,
// holdings or fenced writes, in order of their first event (not the
// nemesis, nor the runner's nodes-left checks).
func (h History) Clients() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range h.Events {
		if e.Client == Nemesis || e.Kind == KindNodesLeft || e.Kind == KindFaultStart || e.Kind == KindFaultEnd || seen[e.Client] {
			continue
		}
		seen[e.Client] = true
		out = append(out, e.Client)
	}
	return out
}

// WriteJSON writes h as indented JSON.
func (h History) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(h)
}

// Read reads a history written by WriteJSON and sorts it.
func Read(r io.Reader) (History, error) {
	var h History
	if err := json.NewDecoder(r).Decode(&h); err != nil {
		return History{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	h.Sort()
	return h, nil
}

// Save writes h to the file at path.
func Save(path string, h History) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := h.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Load reads the history saved at path, as Save writes it or gzipped
// (the chaos report's history/<scenario>.json.gz): a gzip stream is
// recognised by its first bytes, whatever the file's name.
func Load(path string) (History, error) {
	f, err := os.Open(path)
	if err != nil {
		return History{}, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return History{}, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		defer zr.Close()
		return Read(zr)
	}
	return Read(br)
}

// Outcome names a two-phase value of a history (a vote, a decision):
// 1 is commit, anything else abort.
func Outcome(v int64) string {
	if v == 1 {
		return "commit"
	}
	return "abort"
}

// Rel formats t relative to the history's start, for messages.
func Rel(h History, t int64) string {
	return time.Duration(t - h.Start).Round(time.Millisecond).String()
}
