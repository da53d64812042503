package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
)

// peerDriver drives a benchmark program in another language
// (internal/peers/java/Bench.java, internal/peers/python/bench.py) through
// the peers line protocol.
type peerDriver struct {
	p *peers.Peer
}

// NewCurator is the DriverFactory of Apache Curator 5.4 (InterProcessMutex,
// InterProcessReadWriteLock, SimpleDistributedQueue, LeaderLatch,
// DistributedAtomicLong, InterProcessMultiLock, TreeCache).
func NewCurator(ctx context.Context, connect string, sessionTimeout time.Duration) (Driver, error) {
	return startPeer(ctx, peers.Curator, "Bench", connect, sessionTimeout)
}

// NewKazoo is the DriverFactory of kazoo 2.8 (Lock, ReadLock/WriteLock,
// Queue, Election, Counter, TreeCache; no multi-lock).
func NewKazoo(ctx context.Context, connect string, sessionTimeout time.Duration) (Driver, error) {
	return startPeer(ctx, peers.Kazoo, "bench.py", connect, sessionTimeout)
}

func startPeer(ctx context.Context, kind peers.Kind, program, connect string, sessionTimeout time.Duration) (Driver, error) {
	p, err := peers.StartProgram(ctx, kind, program, connect, sessionTimeout)
	if err != nil {
		return nil, err
	}
	return &peerDriver{p: p}, nil
}

func (d *peerDriver) do(ctx context.Context, format string, args ...any) ([]string, error) {
	rest, err := d.p.Do(ctx, fmt.Sprintf(format, args...))
	if err != nil {
		return nil, err
	}
	return strings.Fields(rest), nil
}

// ints parses every field of an answer as an int64.
func ints(f []string, want int) ([]int64, error) {
	if want >= 0 && len(f) != want {
		return nil, fmt.Errorf("bench: peer answered %q, want %d numbers", strings.Join(f, " "), want)
	}
	out := make([]int64, len(f))
	for i, s := range f {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bench: peer answered %q: %w", strings.Join(f, " "), err)
		}
		out[i] = v
	}
	return out, nil
}

func (d *peerDriver) Open(ctx context.Context, n int) error {
	_, err := d.do(ctx, "open %d", n)
	return err
}

func (d *peerDriver) SessionID() int64 { return d.p.SessionID }

// RoundTrip: the peers' drivers have no raw request; the run's floor is
// measured from the Go clients, through the same proxy.
func (d *peerDriver) RoundTrip(context.Context, string, int) ([]time.Duration, error) {
	return nil, ErrUnsupported
}

func (d *peerDriver) Uncontended(ctx context.Context, path string, n int) ([]time.Duration, error) {
	f, err := d.do(ctx, "uncontended %s %d", path, n)
	if err != nil {
		return nil, err
	}
	return durations(f, n)
}

// durations parses an answer of n durations in nanoseconds.
func durations(f []string, n int) ([]time.Duration, error) {
	v, err := ints(f, n)
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, n)
	for i, ns := range v {
		out[i] = time.Duration(ns)
	}
	return out, nil
}

func (d *peerDriver) opsElapsed(ctx context.Context, format string, args ...any) (int, time.Duration, error) {
	f, err := d.do(ctx, format, args...)
	if err != nil {
		return 0, 0, err
	}
	v, err := ints(f, 2)
	if err != nil {
		return 0, 0, err
	}
	return int(v[0]), time.Duration(v[1]), nil
}

func (d *peerDriver) elapsed(ctx context.Context, format string, args ...any) (time.Duration, error) {
	f, err := d.do(ctx, format, args...)
	if err != nil {
		return 0, err
	}
	v, err := ints(f, 1)
	if err != nil {
		return 0, err
	}
	return time.Duration(v[0]), nil
}

func (d *peerDriver) Contend(ctx context.Context, path string, dur time.Duration, k int) (int, time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, 0, err
	}
	return d.opsElapsed(ctx, "contend %s %d %d", path, dur.Milliseconds(), k)
}

func (d *peerDriver) RWMix(ctx context.Context, path string, dur time.Duration, every, k int) (int, time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, 0, err
	}
	return d.opsElapsed(ctx, "rwmix %s %d %d %d", path, dur.Milliseconds(), every, k)
}

func (d *peerDriver) Increments(ctx context.Context, path string, dur time.Duration, k int) (int, time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, 0, err
	}
	return d.opsElapsed(ctx, "counter %s %d %d", path, dur.Milliseconds(), k)
}

func (d *peerDriver) MultiUncontended(ctx context.Context, paths []string, n int) ([]time.Duration, error) {
	f, err := d.do(ctx, "multi-uncontended %d %s", n, strings.Join(paths, " "))
	if err != nil {
		return nil, err
	}
	return durations(f, n)
}

func (d *peerDriver) MultiContend(ctx context.Context, paths []string, dur time.Duration, k int) (int, time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, 0, err
	}
	return d.opsElapsed(ctx, "multi-contend %d %d %s", dur.Milliseconds(), k, strings.Join(paths, " "))
}

func (d *peerDriver) Put(ctx context.Context, path string, n int) (time.Duration, error) {
	return d.elapsed(ctx, "put %s %d", path, n)
}

func (d *peerDriver) Take(ctx context.Context, path string, n, k int) (time.Duration, error) {
	if err := d.Open(ctx, k); err != nil {
		return 0, err
	}
	return d.elapsed(ctx, "take %s %d %d", path, n, k)
}

func (d *peerDriver) ElectStart(ctx context.Context, path string) error {
	_, err := d.do(ctx, "elect-start %s", path)
	return err
}

func (d *peerDriver) WaitLeader(ctx context.Context, after int64) (int64, error) {
	ev, err := d.p.WaitEvent(ctx, func(e peers.Event) bool { return e.Name == "leader" && e.T > after })
	if err != nil {
		return 0, err
	}
	return ev.T, nil
}

func (d *peerDriver) Resign(ctx context.Context) (int64, error) {
	f, err := d.do(ctx, "elect-resign")
	if err != nil {
		return 0, err
	}
	v, err := ints(f, 1)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// msLeft is how long the peer may wait on its own before it answers ERR:
// until ctx's deadline, or a minute when ctx has none. A peer that gives up
// by itself stays in step with the commands.
func msLeft(ctx context.Context) int64 {
	if dl, ok := ctx.Deadline(); ok {
		return max(1, time.Until(dl).Milliseconds())
	}
	return time.Minute.Milliseconds()
}

func (d *peerDriver) WatchTree(ctx context.Context, root string) (int, error) {
	f, err := d.do(ctx, "tree-watch %s %d", root, msLeft(ctx))
	if err != nil {
		return 0, err
	}
	v, err := ints(f, 1)
	if err != nil {
		return 0, err
	}
	return int(v[0]), nil
}

func (d *peerDriver) AwaitTree(ctx context.Context, want map[string]string) (TreeEvents, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "tree-await %d", msLeft(ctx))
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if strings.ContainsAny(p+want[p], " \t\n") || want[p] == "" {
			return TreeEvents{}, fmt.Errorf("bench: %s=%q cannot be sent to a peer", p, want[p])
		}
		fmt.Fprintf(&b, " %s %s", p, want[p])
	}
	f, err := d.do(ctx, "%s", b.String())
	if err != nil {
		return TreeEvents{}, err
	}
	v, err := ints(f, 3)
	if err != nil {
		return TreeEvents{}, err
	}
	return TreeEvents{Updates: int(v[0]), Others: int(v[1]), At: v[2]}, nil
}

func (d *peerDriver) UnwatchTree(ctx context.Context) error {
	_, err := d.do(ctx, "tree-stop")
	return err
}

func (d *peerDriver) Close(context.Context) error {
	return d.p.Close()
}

// Factory returns the DriverFactory of an implementation name.
func Factory(impl string) (DriverFactory, error) {
	switch impl {
	case ImplZkrecipes:
		return NewZkrecipes, nil
	case ImplGoZK:
		return NewGoZK, nil
	case ImplCurator:
		return NewCurator, nil
	case ImplKazoo:
		return NewKazoo, nil
	}
	return nil, fmt.Errorf("bench: unknown implementation %q (want one of %s)", impl, strings.Join(AllImpls, ", "))
}

// Available returns nil when impl can run here, else why not (an error
// wrapping peers.ErrMissing that says what to install).
func Available(impl string) error {
	switch impl {
	case ImplCurator:
		return peers.Available(peers.Curator)
	case ImplKazoo:
		return peers.Available(peers.Kazoo)
	}
	_, err := Factory(impl)
	return err
}
