package inspect_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zkrecipes/zkrecipes/cmd/zkrecipes/inspect"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// The tests of issue 34's findings on the command, each against a real
// ensemble.

// decode parses one -json report.
func decode(t *testing.T, out string) *inspect.Report {
	t.Helper()
	var rep inspect.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	return &rep
}

// Finding: -servers naming one server of three marked live contenders
// connected to the others "(disconnected)" and listed them as stale. On a
// 3-server ensemble, a holder connected to server 1 and waiters connected
// to servers 2 and 3: named alone, server 1 vouches for the holder, and
// the waiters are "unknown" (the membership, learned from the ensemble,
// has two members nobody asked), nothing stale. With every server named,
// all are connected. A holder cut off from the ensemble is then flagged
// disconnected with every server named, and "unknown", not stale, with
// one.
func TestShowOneOfThreeServers(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a ZooKeeper ensemble (testenv)")
	}
	e := testenv.New(t, testenv.Config{Servers: 3})
	testutil.NoLeakedGoroutines(t, testutil.Running("recipes", "lock", "cmd/zkrecipes/inspect"))
	path := testPath(t)
	ctx := ctxFor(t, 3*time.Minute)
	addrs := e.Addrs()
	var sessions []*recipes.Session
	var mutexes []*lock.Mutex
	for i := range 3 {
		s := connect(t, addrs[i:i+1]) // each on one server only
		m, err := lock.New(s, path, lock.WithData([]byte("on-server-"+string(rune('1'+i)))))
		if err != nil {
			t.Fatal(err)
		}
		sessions, mutexes = append(sessions, s), append(mutexes, m)
	}
	if err := mutexes[0].Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// The waiters queue in turn: 2, then 3.
	locked := []chan error{nil, make(chan error, 1), make(chan error, 1)}
	for i := 1; i < 3; i++ {
		go func() { locked[i] <- mutexes[i].Lock(ctx) }()
		waitFor(t, time.Minute, "the waiter's node", func() bool { return len(children(t, sessions[0], path)) == i+1 })
	}

	one := []string{"-servers", addrs[0]}
	rep := decode(t, runOK(t, append(one, "show", path, "-json")...))
	if rep.Sessions.Known || rep.Sessions.Members != 3 || rep.Sessions.Asked != 1 || len(rep.Sessions.Missing) != 2 {
		t.Errorf("sessions with one server named: %+v", rep.Sessions)
	}
	if len(rep.Contenders) != 3 || len(rep.Stale) != 0 {
		t.Fatalf("report: %+v", rep)
	}
	for i, want := range []string{"connected", "unknown", "unknown"} {
		c := rep.Contenders[i]
		if c.Session != hex(sessions[i].ID()) || c.Liveness != want || (want == "unknown") != (c.Live == nil) {
			t.Errorf("contender %d: session %s liveness %q live %v; want %s %s", i+1, c.Session, c.Liveness, c.Live, hex(sessions[i].ID()), want)
		}
	}
	text := runOK(t, append(one, "show", path)...)
	if strings.Contains(text, "disconnected") || strings.Contains(text, "stale") || strings.Count(text, " (unknown)") != 2 ||
		!strings.Contains(text, "1 of the 3 servers of the ensemble answered") || !strings.Contains(text, "server 2 (zk2): not in -servers") {
		t.Errorf("text with one server named:\n%s", text)
	}
	t.Logf("zkrecipes -servers %s show %s:\n%s", addrs[0], path, text)

	all := []string{"-servers", strings.Join(addrs, ",")}
	rep = decode(t, runOK(t, append(all, "-json", "show", path)...))
	if !rep.Sessions.Known || rep.Sessions.Members != 3 || rep.Sessions.Asked != 3 || len(rep.Stale) != 0 {
		t.Errorf("every server named: sessions %+v, stale %+v", rep.Sessions, rep.Stale)
	}
	for i, c := range rep.Contenders {
		if c.Liveness != "connected" {
			t.Errorf("every server named: contender %d %s", i+1, c.Liveness)
		}
	}

	// A holder cut off from every server (its session not yet expired).
	link, err := e.NewLink("cut-holder")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	cut := connect(t, link.Addrs(), recipes.WithSessionTimeout(40*time.Second))
	cm, err := lock.New(cut, path+"-cut", lock.WithData([]byte("cut-off")))
	if err != nil {
		t.Fatal(err)
	}
	if err := cm.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Restore() })
	waitFor(t, 30*time.Second, "the cut holder flagged with every server named", func() bool {
		rep = decode(t, runOK(t, append(all, "-json", "show", path+"-cut")...))
		return len(rep.Contenders) == 1 && rep.Contenders[0].Liveness == "disconnected"
	})
	if len(rep.Stale) != 1 || rep.Stale[0].Path != cm.Node() {
		t.Errorf("stale %+v, want %s", rep.Stale, cm.Node())
	}
	rep = decode(t, runOK(t, append(one, "-json", "show", path+"-cut")...))
	if len(rep.Contenders) != 1 || rep.Contenders[0].Liveness != "unknown" || len(rep.Stale) != 0 {
		t.Errorf("the cut holder with one server named: %+v, stale %+v; want unknown and nothing stale", rep.Contenders, rep.Stale)
	}
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the cut session back", func() bool { return cut.State() == recipes.StateReconnected })
	// The holding was lost to the cut (ErrReleased); Unlock deletes the
	// node the same session still owns.
	_ = cm.Unlock(ctx)

	if err := mutexes[0].Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 3; i++ {
		if err := <-locked[i]; err != nil {
			t.Fatal(err)
		}
		if err := mutexes[i].Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// runOK runs the command with args as they are; a non-zero exit fails the
// test.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := runCommandArgs(ctxFor(t, time.Minute), args...)
	if code != 0 {
		t.Fatalf("zkrecipes %q: exit %d: %s", args, code, errOut)
	}
	return out
}

// Finding: /app with a "locks" child (docs/command.md's layout) was recognised
// as a Curator semaphore. docs/command.md's layout, built by the recipes: the
// application's root is not a recipe, nor is "locks"; the semaphore under
// "pools" is one, and so are the locks.
func TestShowAppLayout(t *testing.T) {
	e := ensemble(t)
	app := testPath(t)
	ctx := ctxFor(t, 2*time.Minute)
	s := connect(t, e.Addrs())
	m, err := lock.New(s, app+"/locks/report")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	rw, err := rwlock.New(s, app+"/locks/catalog")
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Reader().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	sem, err := lock.NewSemaphore(s, app+"/pools/db", 3)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := sem.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	el, err := leader.New(s, app+"/leader", leader.WithData([]byte("billing-7")))
	if err != nil {
		t.Fatal(err)
	}
	term, err := el.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(s, app+"/jobs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Put(ctx, []byte("job-1")); err != nil {
		t.Fatal(err)
	}

	rep := show(t, e, app)
	if rep.Kind != "unknown" || !slices.Equal(rep.Foreign, []string{"jobs", "leader", "locks", "pools"}) || len(rep.Stale) != 0 {
		t.Errorf("%s: kind %s, foreign %v, stale %v; want unknown with its four children", app, rep.Kind, rep.Foreign, rep.Stale)
	}
	if rep := show(t, e, app+"/locks"); rep.Kind != "unknown" {
		t.Errorf("%s/locks: %s", app, rep.Kind)
	}
	if rep := show(t, e, app+"/pools/db"); rep.Kind != "semaphore" || len(rep.Leases) != 1 || rep.Max != 3 {
		t.Errorf("%s/pools/db: %+v", app, rep)
	}
	for p, kind := range map[string]inspect.Kind{"/locks/report": "lock", "/locks/catalog": "rwlock", "/leader": "election", "/jobs": "queue"} {
		if rep := show(t, e, app+p); rep.Kind != kind {
			t.Errorf("%s%s: %s, want %s", app, p, rep.Kind, kind)
		}
	}
	// An application root holding only its locks.
	only := testPath(t)
	m2, err := lock.New(s, only+"/locks/report")
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if rep := show(t, e, only); rep.Kind != "unknown" {
		t.Errorf("%s with only locks/report: %s, want unknown", only, rep.Kind)
	}
	for _, f := range []func() error{func() error { return m.Unlock(ctx) }, func() error { return m2.Unlock(ctx) },
		func() error { return rw.Reader().Unlock(ctx) }, func() error { return lease.Release(ctx) }, func() error { return term.Release(ctx) }} {
		if err := f(); err != nil {
			t.Error(err)
		}
	}
}

// Finding: flags had to come before the command, "show -h" said
// "-servers is required", there was no environment variable for the
// servers and no -version. On a real ensemble: flags after the command
// and its path, the servers from $ZKRECIPES_SERVERS (a flag still wins),
// help and version.
func TestCommandLineHabits(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, time.Minute)
	s := connect(t, e.Addrs())
	m, err := lock.New(s, path, lock.WithData([]byte("habits")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// Flags after the command's words.
	rep := decode(t, runOK(t, append([]string{"show", path, "-json"}, serverFlags(e)...)...))
	if rep.Kind != "lock" || len(rep.Contenders) != 1 || rep.Contenders[0].Data != "habits" {
		t.Errorf("show PATH -json -servers ...: %+v", rep)
	}
	// The servers from the environment; the other connection flags too.
	flags := serverFlags(e)
	for i := 0; i+1 < len(flags); i += 2 {
		t.Setenv("ZKRECIPES_"+strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(flags[i], "-"), "-", "_")), flags[i+1])
	}
	if rep := decode(t, runOK(t, "show", path, "-o", "json")); rep.Kind != "lock" || rep.Contenders[0].Data != "habits" {
		t.Errorf("with $ZKRECIPES_SERVERS: %+v", rep)
	}
	// A flag wins over the environment: a server that refuses.
	_, errOut, code := runCommandArgs(ctx, "show", path, "-servers", "127.0.0.1:1")
	if code != 1 || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Errorf("-servers over $ZKRECIPES_SERVERS: exit %d, %q", code, errOut)
	}
	for _, args := range [][]string{{"show", "-h"}, {"show", path, "-h"}, {"help"}} {
		out, errOut, code := runCommandArgs(ctx, args...)
		if code != 0 || !strings.Contains(out, "usage: zkrecipes") || errOut != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	out, _, code := runCommandArgs(ctx, "-version")
	if code != 0 || !strings.HasPrefix(out, "zkrecipes ") || !strings.Contains(out, "\ngo: go1.") {
		t.Errorf("-version: exit %d, %q", code, out)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Finding: revoke of a waiter overwrote its data with the revoke marker,
// so show lost its identity. A Go holder and a Go waiter: revoke of the
// waiter by the short name show prints is refused, saying what it would
// do, and changes nothing; with -force it is done and says so.
func TestRevokeWaiterNeedsForce(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 2*time.Minute)
	sa, sb := connect(t, e.Addrs()), connect(t, e.Addrs())
	holder, err := lock.New(sa, path, lock.WithData([]byte("go-holder")))
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waiter, err := lock.New(sb, path, lock.WithData([]byte("go-waiter")))
	if err != nil {
		t.Fatal(err)
	}
	wctx, stopWaiting := context.WithCancel(ctx)
	locked := make(chan error, 1)
	go func() { locked <- waiter.Lock(wctx) }()
	var rep *inspect.Report
	waitFor(t, time.Minute, "the waiter's node", func() bool { rep = show(t, e, path); return len(rep.Contenders) == 2 })
	short := inspect.ShortName(rep.Contenders[1].Name)
	if !strings.HasPrefix(short, "lock-") {
		t.Fatalf("short name %q", short)
	}
	_, errOut, code := runCommand(ctx, e, "revoke", path, short)
	if code != 1 || !strings.Contains(errOut, "waits") || !strings.Contains(errOut, `"go-waiter"`) || !strings.Contains(errOut, "-force") {
		t.Errorf("revoke of the waiter: exit %d, %q; want a refusal naming -force", code, errOut)
	}
	if rep := show(t, e, path); rep.Contenders[1].Data != "go-waiter" || rep.Contenders[0].Data != "go-holder" {
		t.Errorf("after the refusal: %+v", rep.Contenders)
	}
	out := zkrecipes(t, e, "revoke", path, short, "-force")
	if !strings.Contains(out, "revoked "+rep.Contenders[1].Path+" (waiter (-force)") {
		t.Errorf("revoke -force printed %q", out)
	}
	data, _, err := sa.Conn().Get(rep.Contenders[1].Path)
	if err != nil || string(data) != string(recipes.RevokeMessage) {
		t.Errorf("the waiter's data after -force: %q, %v", data, err)
	}
	stopWaiting()
	if err := <-locked; err == nil {
		t.Error("the waiter got the lock while the holder held")
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Finding: a missing path exited 0, and a failed connect said only
// "context deadline exceeded" after 10 s. On a real ensemble: show and
// revoke of a missing path exit 1 and say so (watch waits for it); a
// link cut (connections refused) fails at once naming the servers; a
// blackholed link (connections accepted, nothing answered) fails at
// -timeout naming the servers and what they did.
func TestMissingPathAndFailedConnect(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, 2*time.Minute)
	for _, args := range [][]string{{"show", path}, {"show", path, "-json"}, {"revoke", path}} {
		out, errOut, code := runCommand(ctx, e, args...)
		if code != 1 || out != "" || !strings.Contains(errOut, "no such path: "+path) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if out := zkrecipes(t, e, "-count", "1", "watch", path); !strings.Contains(out, "the path does not exist") {
		t.Errorf("watch of a missing path: %q", out)
	}

	link, err := e.NewLink("refused")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	withLink := func(extra ...string) []string {
		args := append([]string{"show", "/"}, serverFlags(e)...)
		args[3] = strings.Join(link.Addrs(), ",") // the value of -servers
		return append(args, extra...)
	}
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, errOut, code := runCommandArgs(ctx, withLink("-timeout", "20s")...)
	took := time.Since(start)
	if code != 1 || !strings.Contains(errOut, "cannot connect to "+strings.Join(link.Addrs(), ",")) || !strings.Contains(errOut, "connection refused") || took > 10*time.Second {
		t.Errorf("refused: exit %d after %v, %q", code, took, errOut)
	}
	t.Logf("refused, %v: %s", took, errOut)
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, errOut, code = runCommandArgs(ctx, withLink("-timeout", "3s")...)
	took = time.Since(start)
	if code != 1 || !strings.Contains(errOut, "cannot connect to "+strings.Join(link.Addrs(), ",")) || !strings.Contains(errOut, "no session within 3s") || took > 8*time.Second {
		t.Errorf("blackholed: exit %d after %v, %q", code, took, errOut)
	}
	t.Logf("blackholed, %v: %s", took, errOut)
}

// Finding: rows were 114 to 131 columns wide. A Curator-named lock with a
// holder and a waiter: the default rows show short names and fit 100
// columns; -o wide (and -wide) show the full names.
func TestShowNarrowAndWide(t *testing.T) {
	e := ensemble(t)
	path := testPath(t)
	ctx := ctxFor(t, time.Minute)
	s1, s2 := connect(t, e.Addrs()), connect(t, e.Addrs())
	m1, err := lock.New(s1, path, lock.WithData([]byte("go billing-worker-1")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	m2, err := lock.New(s2, path, lock.WithData([]byte(strings.Repeat("a long identity ", 8))))
	if err != nil {
		t.Fatal(err)
	}
	locked := make(chan error, 1)
	go func() { locked <- m2.Lock(ctx) }()
	waitFor(t, time.Minute, "the waiter", func() bool { return len(children(t, s1, path)) == 2 })
	full := m1.Node()[strings.LastIndex(m1.Node(), "/")+1:]
	text := zkrecipes(t, e, "show", path)
	if strings.Contains(text, full) || !strings.Contains(text, inspect.ShortName(full)) {
		t.Errorf("default text, want %s shortened to %s:\n%s", full, inspect.ShortName(full), text)
	}
	for _, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 && (strings.Contains(line, "holds") || strings.Contains(line, "waits")) {
			t.Errorf("row of %d columns: %q", n, line)
		}
	}
	t.Logf("default:\n%s", text)
	for _, flag := range [][]string{{"-o", "wide"}, {"-wide"}} {
		wide := zkrecipes(t, e, append([]string{"show", path}, flag...)...)
		if !strings.Contains(wide, full) || !strings.Contains(wide, strings.Repeat("a long identity ", 7)) {
			t.Errorf("%v text lacks the full name or data:\n%s", flag, wide)
		}
	}
	if err := m1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Fatal(err)
	}
	if err := m2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
