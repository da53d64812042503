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

// ErrUnsupported is returned by a driver for a workload its library has no
// recipe for (go-zookeeper has a lock only).
var ErrUnsupported = errors.New("bench: the library has no such recipe")

// Driver runs the workloads of one implementation. It owns a set of
// clients (one ZooKeeper session each), all connected to one connect
// string (a counting proxy). Methods are called one at a time.
type Driver interface {
	// Open makes sure n clients are connected (client 0 is opened first).
	Open(ctx context.Context, n int) error
	// SessionID is client 0's session.
	SessionID() int64
	// Uncontended runs n acquire+release cycles of the exclusive lock on
	// client 0 and returns each cycle's duration.
	Uncontended(ctx context.Context, path string, n int) ([]time.Duration, error)
	// Contend runs clients 0..k-1 (opening them if needed), each with its
	// own lock object on path, looping acquire+release until d has passed;
	// it returns the cycles done and the time until the last client stopped.
	Contend(ctx context.Context, path string, d time.Duration, k int) (int, time.Duration, error)
	// RWMix is Contend with a read/write lock: op j of client i writes when
	// (i+j)%every == 0, and reads otherwise.
	RWMix(ctx context.Context, path string, d time.Duration, every, k int) (int, time.Duration, error)
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
	// Close closes every client.
	Close(ctx context.Context) error
}

// DriverFactory starts a driver of one implementation whose clients use
// connect as their connect string and sessionTimeout as session timeout.
type DriverFactory func(ctx context.Context, connect string, sessionTimeout time.Duration) (Driver, error)
