package chaos

import (
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// The leftover check waits longer only for nodes whose owner the history
// shows expired (replaced by a new session); any other owner ends the wait.
func TestLeftoverOwners(t *testing.T) {
	h := history.History{Events: []history.Event{
		{Client: "c1", Kind: history.KindSession, Detail: "connected"},
		{Client: "c1", Kind: history.KindSession, Detail: "new", Value: 0x20, Arg: 0x10},
		{Client: "c2", Kind: history.KindSession, Detail: "new", Value: 0x31}, // first id seen: nothing expired
		{Client: "c3", Kind: history.KindSession, Detail: "suspended", Arg: 0x40},
	}}
	expired := expiredSessions(h)
	if len(expired) != 1 || !expired[0x10] {
		t.Fatalf("expired sessions %v, want only 0x10", expired)
	}
	for _, tc := range []struct {
		name  string
		nodes []cluster.Ephemeral
		want  bool
	}{
		{"none", nil, true},
		{"an expired owner", []cluster.Ephemeral{{Path: "/a", Owner: 0x10}}, true},
		{"a live owner", []cluster.Ephemeral{{Path: "/a", Owner: 0x20}}, false},
		{"both", []cluster.Ephemeral{{Path: "/a", Owner: 0x10}, {Path: "/b", Owner: 0x40}}, false},
	} {
		if got := allOwnedBy(tc.nodes, expired); got != tc.want {
			t.Errorf("%s: allOwnedBy = %v, want %v", tc.name, got, tc.want)
		}
	}
}
