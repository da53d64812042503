package partition_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/partition"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// One single-server ensemble is shared by the package's integration tests;
// tests that expire sessions use their own Link. Tests do not run in
// parallel, so the goroutine check sees only its own test.
var shared = testutil.NewShared(testenv.Config{Servers: 1})

func TestMain(m *testing.M) { testutil.Main(m, shared) }

// ensemble returns the shared ensemble and fails the test if goroutines
// running go-zookeeper or zkrecipes code outlive it (after every session
// is closed).
func ensemble(tb testing.TB) *testenv.Ensemble {
	tb.Helper()
	e := shared.Start(tb)
	testutil.NoLeakedGoroutines(tb, testutil.Running("recipes", "persistent", "group", "lock", "partition"))
	return e
}

// zkServers returns the addresses of the package's ensemble, for Examples.
func zkServers() []string { return shared.Addrs() }

const (
	sessionTimeout = testutil.SessionTimeout
	// boundary is the tests' stable time: short, but long enough for a
	// test's members to join together.
	boundary = 300 * time.Millisecond
)

var (
	connect  = testutil.Connect
	ctxT     = testutil.Ctx
	waitFor  = testutil.WaitFor
	children = testutil.Children // nil when the node does not exist
)

func testPath(tb testing.TB) string {
	return "/zkrecipes-test/partition/" + strings.NewReplacer("/", "_", " ", "_", "=", "_").Replace(tb.Name())
}

func itemsN(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("item-%d", i))
	}
	return out
}

// interval is one Partition's hold of an item as its member saw it: from
// the moment the member received the Partition to the moment its Context
// was done.
type interval struct {
	member   string
	item     string
	from, to time.Time // to is zero while held
	cause    error
	token    int64
}

// ledger records every member's intervals, on the monotonic clock, and
// the start of every Release.
type ledger struct {
	mu        sync.Mutex
	intervals []*interval
	releases  map[string][]time.Time // member -> when each Release began
}

func newLedger() *ledger { return &ledger{releases: map[string][]time.Time{}} }

// overlaps returns a description of every two intervals of one item that
// overlap: two members believed they held the item at one instant.
func (l *ledger) overlaps() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	by := map[string][]*interval{}
	for _, iv := range l.intervals {
		by[iv.item] = append(by[iv.item], iv)
	}
	var out []string
	far := time.Now().Add(time.Hour)
	end := func(iv *interval) time.Time {
		if iv.to.IsZero() {
			return far
		}
		return iv.to
	}
	for item, ivs := range by {
		sort.Slice(ivs, func(i, j int) bool { return ivs[i].from.Before(ivs[j].from) })
		for i := 1; i < len(ivs); i++ {
			for j := range i {
				if ivs[j].member != ivs[i].member && end(ivs[j]).After(ivs[i].from) {
					out = append(out, fmt.Sprintf("%s held by %s and %s at once", item, ivs[j].member, ivs[i].member))
				}
			}
		}
		for i := 1; i < len(ivs); i++ {
			if ivs[i].token <= ivs[i-1].token {
				out = append(out, fmt.Sprintf("%s: token %d of %s after %d of %s", item, ivs[i].token, ivs[i].member, ivs[i-1].token, ivs[i-1].member))
			}
		}
	}
	return out
}

// member runs one Partitioner and consumes its stream as a worker would:
// it records the Partition, waits for its Context, waits hold (to show who
// waits for whom), and releases it.
type member struct {
	id   string
	s    *recipes.Session
	p    *partition.Partitioner
	st   *recipes.Stream[*partition.Partition]
	l    *ledger
	done chan struct{} // closed once the stream ended and its last Partition was released

	mu       sync.Mutex
	cur      *partition.Partition // received, not yet released
	received int
	hold     time.Duration // wait between Context done and Release
	causes   []error       // of every Partition's Context, in order
	errs     []error       // of Release, other than recipes.ErrReleased
}

// start runs a member of path with id on s.
func start(tb testing.TB, ctx context.Context, s *recipes.Session, l *ledger, path, id string, items []string, opts ...partition.Option) *member {
	tb.Helper()
	opts = append([]partition.Option{partition.WithID(id), partition.WithBoundary(boundary)}, opts...)
	p, err := partition.New(s, path, items, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	m := &member{id: id, s: s, p: p, l: l, done: make(chan struct{})}
	m.st = p.Run(ctx)
	go m.consume(ctx)
	tb.Cleanup(func() { m.stop(tb) })
	return m
}

func (m *member) consume(ctx context.Context) {
	defer close(m.done)
	for part := range m.st.C {
		now := time.Now()
		m.l.mu.Lock()
		var ivs []*interval
		if part.Context().Err() == nil { // act only while held
			for _, item := range part.Items() {
				iv := &interval{member: m.id, item: item, from: now, token: part.Fence(item).Token}
				ivs = append(ivs, iv)
				m.l.intervals = append(m.l.intervals, iv)
			}
		}
		m.l.mu.Unlock()
		m.mu.Lock()
		m.cur = part
		m.received++
		m.mu.Unlock()
		<-part.Context().Done()
		end, cause := time.Now(), context.Cause(part.Context())
		m.l.mu.Lock()
		for _, iv := range ivs {
			iv.to, iv.cause = end, cause
		}
		m.l.mu.Unlock()
		m.mu.Lock()
		m.causes = append(m.causes, cause)
		hold := m.hold
		m.mu.Unlock()
		if hold > 0 {
			time.Sleep(hold) // the worker finishing its work before it lets go
		}
		m.l.mu.Lock()
		m.l.releases[m.id] = append(m.l.releases[m.id], time.Now())
		m.l.mu.Unlock()
		m.mu.Lock()
		m.cur = nil
		m.mu.Unlock()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err := part.Release(rctx); err != nil && !errors.Is(err, recipes.ErrReleased) {
			m.mu.Lock()
			m.errs = append(m.errs, err)
			m.mu.Unlock()
		}
		cancel()
	}
}

// held returns the Partition the member holds now (received, its Context
// not done), or nil.
func (m *member) held() *partition.Partition {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil && m.cur.Context().Err() == nil {
		return m.cur
	}
	return nil
}

func (m *member) lastCause() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.causes) == 0 {
		return nil
	}
	return m.causes[len(m.causes)-1]
}

// stop ends the member's stream and waits until its last Partition was
// released.
func (m *member) stop(tb testing.TB) {
	m.st.Stop()
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		tb.Errorf("member %s did not stop", m.id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, err := range m.errs {
		tb.Errorf("member %s: release: %v", m.id, err)
	}
}

// converged reports whether ms (the live members) hold Partitions split
// among exactly their ids, as Stride splits them, covering items.
func converged(ms []*member, items []string) bool {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.id)
	}
	slices.Sort(ids)
	owned := map[string]bool{}
	for _, m := range ms {
		part := m.held()
		if part == nil || !slices.Equal(part.Members(), ids) || !slices.Equal(part.Items(), partition.Stride(m.id, ids, items)) {
			return false
		}
		for _, it := range part.Items() {
			owned[it] = true
		}
	}
	return len(owned) == len(items)
}

// waitConverged waits until ms converged on items, then checks the lock
// nodes: each item's lock has exactly one node, owned by the session of
// the member whose Partition has the item.
func waitConverged(tb testing.TB, admin *recipes.Session, path string, ms []*member, items []string) {
	tb.Helper()
	var names []string
	for _, m := range ms {
		names = append(names, m.id)
	}
	waitFor(tb, 30*time.Second, fmt.Sprintf("%v to split %d items", names, len(items)), func() bool { return converged(ms, items) })
	for _, m := range ms {
		part := m.held()
		if part == nil {
			tb.Fatalf("%s lost its partition right after convergence: %v", m.id, m.lastCause())
		}
		for _, item := range part.Items() {
			kids := children(tb, admin, path+"/locks/"+item)
			if len(kids) != 1 {
				tb.Errorf("%s: lock nodes %v, want only %s's", item, kids, m.id)
				continue
			}
			_, st, err := admin.Conn().Get(path + "/locks/" + item + "/" + kids[0])
			if err != nil {
				tb.Fatal(err)
			}
			if st.EphemeralOwner != m.s.ID() || st.Czxid != part.Fence(item).Token {
				tb.Errorf("%s: lock node owned by 0x%x (czxid %d), want %s's session 0x%x (token %d)",
					item, st.EphemeralOwner, st.Czxid, m.id, m.s.ID(), part.Fence(item).Token)
			}
		}
	}
}

// private connects a session through a link of its own, so that the test
// can expire it alone.
func private(tb testing.TB, e *testenv.Ensemble, name string, opts ...recipes.Option) (*recipes.Session, *testenv.Link) {
	tb.Helper()
	l, err := e.NewLink(name)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = l.Close() })
	return connect(tb, l.Addrs(), opts...), l
}

// lockNodes returns every node under path/locks, by item.
func lockNodes(tb testing.TB, s *recipes.Session, path string, items []string) map[string][]string {
	tb.Helper()
	out := map[string][]string{}
	for _, it := range items {
		if kids := children(tb, s, path+"/locks/"+it); len(kids) > 0 {
			out[it] = kids
		}
	}
	return out
}
