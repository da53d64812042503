package recipes

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"
)

// owner.owns: the czxid must match when set, the ephemeral owner when set.
func TestOwnerOwns(t *testing.T) {
	for _, tt := range []struct {
		name string
		own  owner
		st   *zk.Stat
		want bool
	}{
		{"no stat", owner{czxid: 5}, nil, false},
		{"czxid matches", owner{czxid: 5}, &zk.Stat{Czxid: 5}, true},
		{"czxid differs: a replacement", owner{czxid: 5}, &zk.Stat{Czxid: 6}, false},
		{"czxid matches, any owner", owner{czxid: 5}, &zk.Stat{Czxid: 5, EphemeralOwner: 9}, true},
		{"session matches", owner{sid: 9}, &zk.Stat{Czxid: 1, EphemeralOwner: 9}, true},
		{"session differs", owner{sid: 9}, &zk.Stat{Czxid: 1, EphemeralOwner: 8}, false},
		{"persistent node, session wanted", owner{sid: 9}, &zk.Stat{Czxid: 1}, false},
		{"both match", owner{czxid: 5, sid: 9}, &zk.Stat{Czxid: 5, EphemeralOwner: 9}, true},
		{"both set, czxid differs", owner{czxid: 5, sid: 9}, &zk.Stat{Czxid: 6, EphemeralOwner: 9}, false},
		{"nothing known: any node", owner{}, &zk.Stat{Czxid: 6}, true},
	} {
		if got := tt.own.owns(tt.st); got != tt.want {
			t.Errorf("%s: owns = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Loss hooks run once, inside the cancellation, with its cause; a hook
// added after the end runs at once; a stopped hook does not run.
func TestLossHooks(t *testing.T) {
	h := &Holding{}
	ctx, cancel := h.lifetime()
	var got []error
	var mu sync.Mutex
	record := func(err error) { mu.Lock(); got = append(got, err); mu.Unlock() }
	h.loss.add(record, func() error { return ctx.Err() })
	stop := h.loss.add(func(error) { t.Error("a stopped hook ran") }, func() error { return ctx.Err() })
	stop()
	lost := errors.New("lost")
	cancel(lost)
	if len(got) != 1 || got[0] != lost {
		t.Fatalf("after cancel: hooks saw %v, want [lost] before cancel returned", got)
	}
	cancel(errors.New("again"))
	if len(got) != 1 {
		t.Fatalf("a second cancel ran the hooks again: %v", got)
	}
	h.loss.add(record, func() error { return context.Cause(ctx) })
	if len(got) != 2 || got[1] != lost {
		t.Fatalf("a hook added after the end did not run at once: %v", got)
	}
}
