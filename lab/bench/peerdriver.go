package bench

import (
	"context"
	"fmt"
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
// InterProcessReadWriteLock, SimpleDistributedQueue, LeaderLatch).
func NewCurator(ctx context.Context, connect string, sessionTimeout time.Duration) (Driver, error) {
	return startPeer(ctx, peers.Curator, "Bench", connect, sessionTimeout)
}

// NewKazoo is the DriverFactory of kazoo 2.8 (Lock, ReadLock/WriteLock,
// Queue, Election).
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

func (d *peerDriver) Uncontended(ctx context.Context, path string, n int) ([]time.Duration, error) {
	f, err := d.do(ctx, "uncontended %s %d", path, n)
	if err != nil {
		return nil, err
	}
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
