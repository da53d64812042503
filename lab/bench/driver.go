package bench

import (
	"context"
	"errors"
	"time"
)

// Implementation names, in the order the table lists them.
const (
	ImplZkrecipes = "zkrecipes"
	ImplGoZK      = "go-zookeeper"
	ImplCurator   = "curator"
	ImplKazoo     = "kazoo"
)

// AllImpls lists every implementation, zkrecipes first (the reference of
// every ratio).
var AllImpls = []string{ImplZkrecipes, ImplGoZK, ImplCurator, ImplKazoo}

// SpreadTaker is a Driver whose queue can spread colliding consumers over
// the head of their listing instead of racing for the oldest item
// (zkrecipes' queue.WithSpread). The harness measures it as a row of its
// own, queue-take-K-spread, beside the strict FIFO row of the same K: it
// gives up FIFO order, so it is not the same workload as the peers' take.
type SpreadTaker interface {
	TakeSpread(ctx context.Context, path string, n, k int) (time.Duration, error)
}

// ErrUnsupported is returned by a driver for a workload its library has no
// recipe for (go-zookeeper has a lock only, and no cache; kazoo has no
// multi-lock).
var ErrUnsupported = errors.New("bench: the library has no such recipe")

// Driver runs the workloads of one implementation. It owns a set of
// clients (one ZooKeeper session each), all connected to one connect
// string (a counting proxy). Methods are called one at a time.
type Driver interface {
	// Open makes sure n clients are connected (client 0 is opened first).
	Open(ctx context.Context, n int) error
	// SessionID is client 0's session.
	SessionID() int64
	// RoundTrip sends n setData requests for path (any version), one at a
	// time, from client 0's session, and returns each one's duration: a
	// write's round trip through the quorum, the unit of every latency row
	// (an acquire+release is two writes at least, the create and the
	// delete; ErrUnsupported: the driver has no raw request).
	RoundTrip(ctx context.Context, path string, n int) ([]time.Duration, error)
	// Uncontended runs n acquire+release cycles of the exclusive lock on
	// client 0 and returns each cycle's duration.
	Uncontended(ctx context.Context, path string, n int) ([]time.Duration, error)
	// Contend runs clients 0..k-1 (opening them if needed), each with its
	// own lock object on path, looping acquire+release until d has passed
	// (each client at least once, however late it starts: so are the other
	// loops below); it returns the cycles done and the time until the last
	// client stopped.
	Contend(ctx context.Context, path string, d time.Duration, k int) (int, time.Duration, error)
	// RWMix is Contend with a read/write lock: op j of client i writes when
	// (i+j)%every == 0, and reads otherwise.
	RWMix(ctx context.Context, path string, d time.Duration, every, k int) (int, time.Duration, error)
	// Increments runs clients 0..k-1 (opening them if needed), each with
	// its own counter object on path, looping increments until d has
	// passed; an increment is a compare-and-set retried at once, without
	// sleeping, until it succeeds. It returns the successful increments and
	// the time until the last client stopped.
	Increments(ctx context.Context, path string, d time.Duration, k int) (int, time.Duration, error)
	// MultiUncontended runs n acquire+release cycles of a multi-lock over
	// paths (given sorted) on client 0 and returns each cycle's duration.
	MultiUncontended(ctx context.Context, paths []string, n int) ([]time.Duration, error)
	// MultiContend is Contend with a multi-lock over paths (given sorted).
	MultiContend(ctx context.Context, paths []string, d time.Duration, k int) (int, time.Duration, error)
	// Put puts n items of 100 bytes from client 0, one request each.
	Put(ctx context.Context, path string, n int) (time.Duration, error)
	// Take takes n items with clients 0..k-1 consuming concurrently.
	Take(ctx context.Context, path string, n, k int) (time.Duration, error)
	// ElectStart makes client 0 join the election on path; it returns at
	// once; WaitLeader then reports when it became leader.
	ElectStart(ctx context.Context, path string) error
	// WaitLeader waits until client 0 leads, at a time after after (Now()),
	// and returns that time.
	WaitLeader(ctx context.Context, after int64) (int64, error)
	// Resign gives up leadership and returns Now() taken just before.
	Resign(ctx context.Context) (int64, error)
	// WatchTree starts a tree cache of the subtree at root on client 0
	// (zkrecipes' cache.TreeCache, Curator's and kazoo's TreeCache, data
	// cached, no depth limit) and returns once the cache has delivered its
	// initialized event, with the number of distinct nodes it delivered
	// before it (its added events). From then on the driver reads every
	// event as it is delivered, as an application would, doing no more
	// than noting, per path, the data of its last added or updated event
	// and Now() when that event was delivered, and counting the update
	// events and the others (added, removed, reset or connection events).
	// One tree cache runs at a time; it runs until UnwatchTree or Close,
	// whatever becomes of ctx.
	WatchTree(ctx context.Context, root string) (nodes int, err error)
	// AwaitTree waits until, for every path of want, the last event the
	// cache delivered for it carried that data (short ASCII, no spaces),
	// and returns what was delivered since WatchTree returned: the update
	// events, the other events, and Now() at the delivery of the latest of
	// the events that showed want. It sends nothing itself, and fails when
	// ctx ends first (the cache never showed some final value).
	AwaitTree(ctx context.Context, want map[string]string) (TreeEvents, error)
	// UnwatchTree stops the tree cache WatchTree started (nothing when
	// none runs). A cache may send requests as it closes (Curator removes
	// its watches): the harness takes its counts before.
	UnwatchTree(ctx context.Context) error
	// QueueTake takes n items, one at a time, from the queue at path with
	// client 0 alone (Take with one consumer, on a new queue object, so
	// that a recipe caching its listing lists afresh) and returns the time
	// taken. It gives up when ctx ends and the driver stays usable: a peer
	// gives up by itself at ctx's deadline and replaces client 0 with a new
	// session, which ends a take stuck retrying (a reply its client cannot
	// read). See qbdrivers.go.
	QueueTake(ctx context.Context, path string, n int) (time.Duration, error)
	// BarrierEnter makes n members of one double barrier for n members on
	// path (member i on client i%k, clients opened as needed; each member
	// its own barrier object on a goroutine or thread of its own; all
	// started together) enter, and returns once every one has entered: the
	// time from the start to the last Enter's return. The members stay
	// entered until BarrierLeave. When ctx ends first it fails (a peer by
	// itself at ctx's deadline), leaving members blocked: close the driver.
	BarrierEnter(ctx context.Context, path string, n, k int) (time.Duration, error)
	// BarrierLeave makes every member of the last BarrierEnter leave, all
	// started together, and returns the time from the start to the last
	// Leave's return. Failure as BarrierEnter's.
	BarrierLeave(ctx context.Context) (time.Duration, error)
	// ElectJoin makes client i (opening clients 0..i as needed) join the
	// election on path with an election object of its own, at the back of
	// the line (the scale series' many participants, one session each, in
	// one driver). It returns at once; ElectAwait reports who leads. A
	// client takes part at most once at a time.
	ElectJoin(ctx context.Context, path string, i int) error
	// ElectAwait waits until a participant of ElectJoin leads, at a time
	// after after (Now()), and returns which client and that time.
	ElectAwait(ctx context.Context, after int64) (int, int64, error)
	// ElectLeave makes participant i resign (it leads) or leave the line,
	// and returns Now() taken just before; i may join again.
	ElectLeave(ctx context.Context, i int) (int64, error)
	// Close closes every client (and stops the tree cache and the
	// election participants, if any).
	Close(ctx context.Context) error
}

// TreeEvents is what a tree cache delivered while the harness wrote (see
// Driver.AwaitTree).
type TreeEvents struct {
	// Updates is the update events delivered (data changes of cached
	// nodes). Changes that come faster than the cache reads are coalesced
	// into one event carrying the latest data, so Updates may be smaller
	// than the changes made; never larger.
	Updates int
	// Others is the events of other kinds (added, removed, reset,
	// connection state): none is expected while only data changes.
	Others int
	// At is Now() when the cache had delivered the last final value.
	At int64
}

// DriverFactory starts a driver of one implementation whose clients use
// connect as their connect string and sessionTimeout as session timeout.
type DriverFactory func(ctx context.Context, connect string, sessionTimeout time.Duration) (Driver, error)
