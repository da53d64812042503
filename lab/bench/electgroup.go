package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/leader"
)

// The many-participant election of the scale series (Driver.ElectJoin,
// ElectAwait, ElectLeave): every participant is one client of the same
// driver, so that hundreds of them cost one process, not one each.

// elected is one participant's becoming leader (or its campaign failing).
type elected struct {
	i   int
	at  int64 // Now() when it led
	err error
}

// electGroup runs in-process participants, one campaign goroutine each.
// Leadership events are kept in order, so that ElectAwait sees one that
// came before it was called.
type electGroup struct {
	mu     sync.Mutex
	parts  map[int]*groupMember
	events []elected
	notify chan struct{} // closed and replaced on every event
}

type groupMember struct {
	cancel  context.CancelFunc // ends the campaign (leaving the line)
	done    chan struct{}      // closed when the campaign returned
	release func(context.Context) error
}

func newElectGroup() *electGroup {
	return &electGroup{parts: map[int]*groupMember{}, notify: make(chan struct{})}
}

func (g *electGroup) record(e elected) {
	g.mu.Lock()
	g.events = append(g.events, e)
	close(g.notify)
	g.notify = make(chan struct{})
	g.mu.Unlock()
}

// join starts participant i's campaign; campaign blocks until it leads and
// returns how to resign. The campaign runs until it leads, fails, or leave
// or stop ends it, whatever becomes of the caller's context.
func (g *electGroup) join(i int, campaign func(ctx context.Context) (func(context.Context) error, error)) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.parts[i]; ok {
		return fmt.Errorf("bench: client %d takes part already", i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &groupMember{cancel: cancel, done: make(chan struct{})}
	g.parts[i] = m
	go func() {
		defer close(m.done)
		release, err := campaign(ctx)
		if err != nil {
			if ctx.Err() == nil { // not left: a failure ElectAwait reports
				g.record(elected{i: i, at: Now(), err: err})
			}
			return
		}
		g.mu.Lock()
		m.release = release
		g.mu.Unlock()
		g.record(elected{i: i, at: Now()})
	}()
	return nil
}

// await returns the first participant that led after after.
func (g *electGroup) await(ctx context.Context, after int64) (int, int64, error) {
	for {
		g.mu.Lock()
		for _, e := range g.events {
			if e.err != nil {
				g.mu.Unlock()
				return 0, 0, fmt.Errorf("bench: participant %d: %w", e.i, e.err)
			}
			if e.at > after {
				g.mu.Unlock()
				return e.i, e.at, nil
			}
		}
		ch := g.notify
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, 0, context.Cause(ctx)
		}
	}
}

// leave makes participant i resign (when it leads) or leave the line, and
// returns Now() taken just before.
func (g *electGroup) leave(ctx context.Context, i int) (int64, error) {
	g.mu.Lock()
	m, ok := g.parts[i]
	if ok {
		delete(g.parts, i)
	}
	release := func(context.Context) error { return nil }
	if ok && m.release != nil {
		release = m.release
	}
	g.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("bench: client %d takes no part", i)
	}
	t := Now()
	if m.release == nil {
		m.cancel()
		<-m.done
		g.mu.Lock()
		if m.release != nil { // it led just before it was cancelled
			release = m.release
		}
		g.mu.Unlock()
	}
	err := release(ctx)
	m.cancel()
	return t, err
}

// stop ends every participant: the campaigns waiting in line all at once,
// then the leader's term.
func (g *electGroup) stop(ctx context.Context) error {
	g.mu.Lock()
	parts := g.parts
	g.parts = map[int]*groupMember{}
	g.mu.Unlock()
	for _, m := range parts {
		m.cancel()
	}
	var errs []error
	for _, m := range parts {
		<-m.done
		g.mu.Lock()
		release := m.release
		g.mu.Unlock()
		if release != nil {
			errs = append(errs, release(ctx))
		}
	}
	return errors.Join(errs...)
}

// ElectJoin runs a leader.Election (defaults) of its own on client i.
func (d *zkrecipesDriver) ElectJoin(ctx context.Context, path string, i int) error {
	if err := d.Open(ctx, i+1); err != nil {
		return err
	}
	e, err := leader.New(d.ss[i], path)
	if err != nil {
		return err
	}
	if d.group == nil {
		d.group = newElectGroup()
	}
	return d.group.join(i, func(ctx context.Context) (func(context.Context) error, error) {
		t, err := e.Campaign(ctx)
		if err != nil {
			return nil, err
		}
		return t.Release, nil
	})
}

func (d *zkrecipesDriver) ElectAwait(ctx context.Context, after int64) (int, int64, error) {
	if d.group == nil {
		return 0, 0, errors.New("bench: nobody joined")
	}
	return d.group.await(ctx, after)
}

func (d *zkrecipesDriver) ElectLeave(ctx context.Context, i int) (int64, error) {
	if d.group == nil {
		return 0, errors.New("bench: nobody joined")
	}
	return d.group.leave(ctx, i)
}

// ElectJoin: go-zookeeper has no election recipe (the leader workload
// stands its zk.Lock in for one; the scale series does not).
func (d *gozkDriver) ElectJoin(context.Context, string, int) error { return ErrUnsupported }

func (d *gozkDriver) ElectAwait(context.Context, int64) (int, int64, error) {
	return 0, 0, ErrUnsupported
}

func (d *gozkDriver) ElectLeave(context.Context, int) (int64, error) { return 0, ErrUnsupported }

// ElectJoin: the peer runs a LeaderLatch (Curator) or Election (kazoo) on
// client i and reports "EVENT elected <t> <i>" when it leads.
func (d *peerDriver) ElectJoin(ctx context.Context, path string, i int) error {
	if err := d.Open(ctx, i+1); err != nil {
		return err
	}
	_, err := d.do(ctx, "elect-join %s %d", path, i)
	return err
}

func (d *peerDriver) ElectAwait(ctx context.Context, after int64) (int, int64, error) {
	ev, err := d.p.WaitEvent(ctx, func(e peers.Event) bool { return e.Name == "elected" && e.T > after })
	if err != nil {
		return 0, 0, err
	}
	if len(ev.Rest) != 1 {
		return 0, 0, fmt.Errorf("bench: peer reported elected %d %v", ev.T, ev.Rest)
	}
	i, err := strconv.Atoi(ev.Rest[0])
	if err != nil {
		return 0, 0, fmt.Errorf("bench: peer reported elected %d %v: %w", ev.T, ev.Rest, err)
	}
	return i, ev.T, nil
}

func (d *peerDriver) ElectLeave(ctx context.Context, i int) (int64, error) {
	f, err := d.do(ctx, "elect-leave %d", i)
	if err != nil {
		return 0, err
	}
	v, err := ints(f, 1)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}
