package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// A Go holder, a Curator InterProcessMutex waiting, then a Go waiter on one
// path: show lists them in that order with their data and sessions, the
// first one holding, in text and in JSON.
func TestShowLockHolderAndWaiters(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 3*time.Minute)
	cur, curSID := startPeer(t, peers.Curator, e)

	sa := connect(t, e.Addrs())
	holder, err := lock.New(sa, path, lock.WithData([]byte("go-holder")))
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	background(t, "curator waiter", func() error {
		_, err := cur.Do(ctx, "lock-loop "+path+" 1 "+path+"-counter")
		return err
	})
	waitFor(t, time.Minute, "the Curator waiter's node", func() bool { return len(children(t, sa, path)) == 2 })
	sb := connect(t, e.Addrs())
	waiter, err := lock.New(sb, path, lock.WithData([]byte("go-waiter")))
	if err != nil {
		t.Fatal(err)
	}
	locked := make(chan error, 1)
	go func() { locked <- waiter.Lock(ctx) }()
	waitFor(t, time.Minute, "the Go waiter's node", func() bool { return len(children(t, sa, path)) == 3 })

	rep := show(t, e, path)
	if rep.Kind != "lock" || rep.Dialect != "curator" || len(rep.Contenders) != 3 {
		t.Fatalf("report: %+v", rep)
	}
	want := []struct {
		session, data string
		holds         bool
	}{
		{hex(sa.ID()), "go-holder", true},
		{curSID, "", false}, // Curator's InterProcessMutex writes the client's IP address
		{hex(sb.ID()), "go-waiter", false},
	}
	for i, w := range want {
		c := rep.Contenders[i]
		if c.Session != w.session || c.Holds != w.holds || (w.data != "" && c.Data != w.data) {
			t.Errorf("contender %d: %+v, want session %s holds %v data %q", i+1, c, w.session, w.holds, w.data)
		}
		if c.Live == nil || !*c.Live {
			t.Errorf("contender %d: live %v, want true (every owner is connected)", i+1, c.Live)
		}
	}
	if !rep.Sessions.Known || len(rep.Stale) != 0 || len(rep.Foreign) != 0 {
		t.Errorf("sessions %+v, stale %v, foreign %v", rep.Sessions, rep.Stale, rep.Foreign)
	}
	if rep.Contenders[0].Name != holder.Node()[strings.LastIndex(holder.Node(), "/")+1:] {
		t.Errorf("holder node %s, want %s", rep.Contenders[0].Name, holder.Node())
	}

	text := zkrecipes(t, e, "show", path)
	lines := strings.Split(text, "\n")
	var rows []string
	for _, l := range lines {
		if strings.Contains(l, "holds ") || strings.Contains(l, "waits ") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 3 || !strings.Contains(rows[0], "holds") || !strings.Contains(rows[0], `"go-holder"`) ||
		!strings.Contains(rows[1], curSID) || !strings.Contains(rows[2], `"go-waiter"`) {
		t.Errorf("text rows %q in:\n%s", rows, text)
	}
	t.Logf("zkrecipes show %s:\n%s", path, text)

	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Fatalf("Go waiter: %v", err)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A Go holder in kazoo's dialect and a kazoo Lock waiting: recognised as a
// kazoo lock, the Go node holding.
func TestShowKazooLock(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 3*time.Minute)
	kz, kzSID := startPeer(t, peers.Kazoo, e)
	s := connect(t, e.Addrs())
	m, err := lock.New(s, path, lock.WithDialect(recipes.Kazoo), lock.WithData([]byte("go")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	background(t, "kazoo waiter", func() error {
		_, err := kz.Do(ctx, "lock-loop "+path+" 1 "+path+"-counter")
		return err
	})
	waitFor(t, time.Minute, "the kazoo waiter's node", func() bool { return len(children(t, s, path)) == 2 })
	rep := show(t, e, path)
	if rep.Kind != "lock" || rep.Dialect != "kazoo" || len(rep.Contenders) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	if c := rep.Contenders[0]; !c.Holds || c.Session != hex(s.ID()) || c.Data != "go" {
		t.Errorf("holder %+v", c)
	}
	if c := rep.Contenders[1]; c.Holds || c.Session != kzSID || c.Data != "kazoo" {
		t.Errorf("waiter %+v, want kazoo's session %s and its identifier", c, kzSID)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// revoke on a Go lock.Mutex holder with WithRevocation: the holder sees
// Revoked and releases, and the waiter behind it gets the lock. A holder
// without revocation enabled is asked too (its node's data changes), but
// keeps holding: revocation is a request.
func TestRevokeGoHolder(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 2*time.Minute)
	sa, sb := connect(t, e.Addrs()), connect(t, e.Addrs())
	holder, err := lock.New(sa, path, lock.WithRevocation(), lock.WithData([]byte("revocable")))
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	holderNode, holderCtx := holder.Node(), holder.Context()
	released := make(chan error, 1)
	go func() {
		select {
		case <-holder.Revoked():
			released <- holder.Unlock(context.Background())
		case <-ctx.Done():
			released <- ctx.Err()
		}
	}()
	waiter, err := lock.New(sb, path)
	if err != nil {
		t.Fatal(err)
	}
	locked := make(chan error, 1)
	go func() { locked <- waiter.Lock(ctx) }()
	waitFor(t, time.Minute, "the waiter's node", func() bool { return len(children(t, sa, path)) == 2 })

	out := zkrecipes(t, e, "revoke", path)
	if !strings.Contains(out, "revoked "+holderNode) || !strings.Contains(out, hex(sa.ID())) {
		t.Errorf("revoke printed %q, want the holder %s", out, holderNode)
	}
	// Unlock after a revocation deletes the node and says the holding
	// was already lost to it.
	if err := <-released; !errors.Is(err, recipes.ErrRevoked) {
		t.Fatalf("holder's Unlock after revocation: %v, want an error wrapping ErrRevoked", err)
	}
	if err := <-locked; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if cause := context.Cause(holderCtx); !errors.Is(cause, recipes.ErrRevoked) {
		t.Errorf("holder's context cause %v, want ErrRevoked", cause)
	}

	// A named node that is not a contender is refused.
	_, errOut, code := runCommand(ctx, e, "revoke", path, "no-such-node")
	if code != 1 || !strings.Contains(errOut, "not a contender") {
		t.Errorf("revoke of a stranger: exit %d, %q", code, errOut)
	}
	// The new holder, without revocation, is asked through JSON output.
	out = zkrecipes(t, e, "-json", "revoke", path, waiter.Node()[strings.LastIndex(waiter.Node(), "/")+1:])
	if !strings.Contains(out, fmt.Sprintf("%q: %q", "revoked", waiter.Node())) {
		t.Errorf("JSON revoke printed %s", out)
	}
	data, _, err := sb.Conn().Get(waiter.Node())
	if err != nil || string(data) != string(recipes.RevokeMessage) {
		t.Errorf("waiter's node data %q, %v; want the revoke message", data, err)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A Go reader holds, a Curator writer waits behind it, and a Go reader
// queued after the writer waits too: show marks only the first reader as
// holding, and revoke without a node names that reader.
func TestShowRWLock(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 3*time.Minute)
	cur, curSID := startPeer(t, peers.Curator, e)
	s1, s2 := connect(t, e.Addrs()), connect(t, e.Addrs())
	r1, err := rwlock.New(s1, path, rwlock.WithRevocation())
	if err != nil {
		t.Fatal(err)
	}
	if err := r1.Reader().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	background(t, "curator writer", func() error {
		_, err := cur.Do(ctx, "rw-loop "+path+" 1 w "+path+"-counter")
		return err
	})
	waitFor(t, time.Minute, "the Curator writer's node", func() bool { return len(children(t, s1, path)) == 2 })
	r2, err := rwlock.New(s2, path)
	if err != nil {
		t.Fatal(err)
	}
	rlocked := make(chan error, 1)
	go func() { rlocked <- r2.Reader().Lock(ctx) }()
	waitFor(t, time.Minute, "the second reader's node", func() bool { return len(children(t, s1, path)) == 3 })

	rep := show(t, e, path)
	if rep.Kind != "rwlock" || rep.Dialect != "curator" || len(rep.Contenders) != 3 {
		t.Fatalf("report: %+v", rep)
	}
	want := []struct {
		role, session string
		holds         bool
	}{{"read", hex(s1.ID()), true}, {"write", curSID, false}, {"read", hex(s2.ID()), false}}
	for i, w := range want {
		if c := rep.Contenders[i]; c.Role != w.role || c.Session != w.session || c.Holds != w.holds {
			t.Errorf("contender %d: %+v, want %+v", i+1, c, w)
		}
	}
	text := zkrecipes(t, e, "show", path)
	if !strings.Contains(text, "holds read") || !strings.Contains(text, "waits write") || !strings.Contains(text, "waits read") {
		t.Errorf("text:\n%s", text)
	}
	out := zkrecipes(t, e, "revoke", path)
	if !strings.Contains(out, rep.Contenders[0].Path) || strings.Count(out, "revoked ") != 1 {
		t.Errorf("revoke printed %q, want the reader %s only", out, rep.Contenders[0].Path)
	}
	select {
	case <-r1.Reader().Revoked():
	case <-ctx.Done():
		t.Fatal("the reader did not see the revocation")
	}
	if err := r1.Reader().Unlock(ctx); !errors.Is(err, recipes.ErrRevoked) {
		t.Errorf("RUnlock after revocation: %v, want ErrRevoked", err)
	}
	if err := <-rlocked; err != nil {
		t.Fatal(err)
	}
	if err := r2.Reader().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
