package recipes

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/tap"
)

// The names an Observer's events carry, and the metric labels the
// adapters make of them (docs/observability.md lists them). Invariant:
// every name is fixed text (no path, no session id), so a label made of
// one has a bounded number of values.

// Outcome names c's result for a metric label: "ok", a ZooKeeper answer
// ("no_node", "node_exists", "bad_version", "not_empty", "no_auth",
// "invalid_acl", "no_children_for_ephemerals", "auth_failed",
// "session_expired", "session_moved", "closing"), "connection_closed",
// or "error" for any other. Pure.
func (c CallEvent) Outcome() string {
	if c.Err == nil {
		return "ok"
	}
	for _, o := range outcomes {
		if errors.Is(c.Err, o.err) {
			return o.name
		}
	}
	return "error"
}

var outcomes = []struct {
	err  error
	name string
}{
	{zk.ErrNoNode, "no_node"}, {zk.ErrNodeExists, "node_exists"}, {zk.ErrBadVersion, "bad_version"},
	{zk.ErrNotEmpty, "not_empty"}, {zk.ErrNoAuth, "no_auth"}, {zk.ErrInvalidACL, "invalid_acl"},
	{zk.ErrNoChildrenForEphemerals, "no_children_for_ephemerals"}, {zk.ErrAuthFailed, "auth_failed"},
	{zk.ErrSessionExpired, "session_expired"}, {zk.ErrSessionMoved, "session_moved"},
	{zk.ErrClosing, "closing"}, {zk.ErrConnectionClosed, "connection_closed"},
}

// End names how an ended holding ended, for a metric label: "released"
// (its holder gave it up: ErrReleased), or why it was lost:
// "lease_expired", "suspended", "closed", "session_lost", "node_deleted",
// "revoked", "other"; "" for an acquisition. Pure.
func (e HoldingEvent) End() string {
	if e.Phase != HoldingEnded {
		return ""
	}
	for _, c := range ends {
		if errors.Is(e.Cause, c.err) {
			return c.name
		}
	}
	return "other"
}

// ends is in matching order: ErrLeaseExpired also matches ErrSuspended,
// ErrClosed also matches ErrSessionLost.
var ends = []struct {
	err  error
	name string
}{
	{ErrReleased, "released"}, {ErrLeaseExpired, "lease_expired"}, {ErrSuspended, "suspended"},
	{ErrClosed, "closed"}, {ErrSessionLost, "session_lost"}, {ErrNodeDeleted, "node_deleted"},
	{ErrRevoked, "revoked"},
}

// OpName returns the name of ZooKeeper op code op, as CallEvent.Op
// spells it ("op(<n>)" for a code it does not know). Pure.
func OpName(op int32) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("op(%d)", op)
}

var opNames = map[int32]string{
	1: "create", 2: "delete", 3: "exists", 4: "getData", 5: "setData", 6: "getACL", 7: "setACL",
	8: "getChildren", 9: "sync", 11: "ping", 12: "getChildren2", 13: "check", 14: "multi",
	15: "create2", 16: "reconfig", 17: "checkWatches", 18: "removeWatches", 19: "createContainer",
	20: "deleteContainer", 21: "createTTL", 22: "multiRead", 100: "setAuth", 101: "setWatches",
	102: "sasl", 103: "getEphemerals", 104: "getAllChildrenNumber", 105: "setWatches2",
	106: "addWatch", 107: "whoAmI", -11: "closeSession",
}

// codeErrs are the server's error codes go-zookeeper has errors for.
var codeErrs = map[int32]error{
	-100: zk.ErrAPIError, -101: zk.ErrNoNode, -102: zk.ErrNoAuth, -103: zk.ErrBadVersion,
	-108: zk.ErrNoChildrenForEphemerals, -110: zk.ErrNodeExists, -111: zk.ErrNotEmpty,
	-112: zk.ErrSessionExpired, -114: zk.ErrInvalidACL, -115: zk.ErrAuthFailed, -116: zk.ErrClosing,
	-117: zk.ErrNothing, -118: zk.ErrSessionMoved, -123: zk.ErrReconfigDisabled, -8: zk.ErrBadArguments,
}

// codeErr returns the error for a reply's error code: nil for 0. Pure.
func codeErr(code int32) error {
	if code == 0 {
		return nil
	}
	if err, ok := codeErrs[code]; ok {
		return err
	}
	return fmt.Errorf("%w: error code %d", zk.ErrUnknown, code)
}

// callSink returns the tap's sink of calls for observer o: each call as a
// CallEvent to o.ObserveCall. Without an observer it is nil, and the tap
// times nothing.
func callSink(o Observer) func([]tap.Call) {
	if o == nil {
		return nil
	}
	return func(calls []tap.Call) {
		for _, c := range calls {
			o.ObserveCall(callEvent(c))
		}
	}
}

// callEvent is the CallEvent of a call the tap saw. Pure.
func callEvent(c tap.Call) CallEvent {
	err := codeErr(c.Code)
	if c.Closed {
		err = zk.ErrConnectionClosed
	}
	return CallEvent{Op: OpName(c.Op), Path: c.Path, SessionID: c.SessionID, Duration: c.Duration, Err: err}
}
