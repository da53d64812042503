package workloads

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/shared"
)

// Counter is the workload of shared.Long: every client, with its own
// recipes.Session on its own link, loops Increment on one counter (Curator's
// DistributedAtomicLong layout) and records each as an addition of 1: ok
// with the value after it, failed when the Long gave up (another writer
// came first at every attempt: nothing written), unknown when its outcome
// is uncertain (shared.ErrUncertain) or the call ended without an answer.
//
// Checked by: the additions are linearizable (counter-linearizable), and
// liveness after every heal.
//
// CounterBlind runs it as a mutant and twin.
type Counter struct {
	// Pace is the pause between increments. Default 5 ms.
	Pace time.Duration
}

// Name is "counter".
func (w *Counter) Name() string { return "counter" }

// CounterBlind is the counter's blind-retry mutant and its twin: the
// counter workload, whose clients, with Mutant set, increment with a
// hand-written loop that treats any failed write like a conflict: it reads
// again and writes again. A write whose answer was lost (a half-open link
// drops the answers of writes the server applied) is then applied twice
// and counted once; without such a fault no answer is lost and the mutant
// is correct. counter-linearizable catches it. The twin uses shared.Long,
// which reports such a write as uncertain.
//
// The target (c1, the only client the fault reaches) increments every 5 ms;
// the bystanders (env.Clients-1 of them, at least two) increment with
// shared.Long once a second, so that the target rarely meets a conflict:
// the write a fault strikes must be one the server applies, and a
// bystander's write between the target's last write and this one turns
// it into a conflict (at 50 ms, three bystanders did so for about half the
// target's writes, and the mutant passed half-open on some seeds). The mutant target writes with the
// version its last write returned and reads only after an error, so the
// request in flight when a fault strikes is almost always a write.
type CounterBlind struct {
	Mutant bool
}

// Name is "counter-blind-mutant", or "counter-blind" for the twin.
func (w *CounterBlind) Name() string { return mutantName("counter-blind", w.Mutant) }

// Checkers are the counter workload's.
func (w *CounterBlind) Checkers(cfg CheckConfig) []checkers.Checker {
	return (&Counter{}).Checkers(cfg)
}

// Run runs the target and the bystanders until ctx is done.
func (w *CounterBlind) Run(ctx context.Context, env *cluster.Env) error {
	path := env.Root + "/counter"
	cs, closeLinks, err := mutantClients(env, 3, 1)
	if err != nil {
		return err
	}
	defer closeLinks()
	var wg sync.WaitGroup
	errc := make(chan error, len(cs))
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pace, blind := time.Second, false
			if i == 0 {
				pace, blind = 5*time.Millisecond, w.Mutant
			}
			if err := counterClient(ctx, env, c, path, pace, blind); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

// Checkers: counter-linearizable, liveness.
func (w *Counter) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.CounterLinearizable(cfg.CheckTimeout), checkers.Liveness(cfg.LivenessBound)}
}

// Run runs env.Clients clients on <root>/counter until ctx is done. The
// node is created by the first increment.
func (w *Counter) Run(ctx context.Context, env *cluster.Env) error {
	pace := w.Pace
	if pace == 0 {
		pace = 5 * time.Millisecond
	}
	path := env.Root + "/counter"
	var wg sync.WaitGroup
	errc := make(chan error, env.Clients)
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			wg.Wait()
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := counterClient(ctx, env, c, path, pace, false); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

// counterClient loops increments of path, with shared.Long or, when blind,
// with the mutant's loop.
func counterClient(ctx context.Context, env *cluster.Env, c *cluster.Client, path string, pace time.Duration, blind bool) error {
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	l, err := shared.NewLong(s, path)
	if err != nil {
		return err
	}
	var last blindState
	for ctx.Err() == nil {
		op := c.Log.Invoke(history.FnAdd, path, 1)
		if blind {
			last = blindIncrement(ctx, s, path, op, last)
		} else {
			r, err := l.Increment(ctx)
			switch {
			case err == nil && r.Succeeded:
				op.OK(r.Post)
			case err == nil:
				op.Fail("gave up: another writer came first at every attempt")
			default: // uncertain, or ended without an answer: it may have been applied
				op.Unknown(err.Error())
			}
		}
		if !cluster.Sleep(ctx, pace) {
			break
		}
	}
	return nil
}

// blindState is what the mutant's last write returned.
type blindState struct {
	known   bool
	value   int64
	version int32
}

// blindIncrement is the mutant's increment: write the value after the last
// one with the version that write returned (read first when they are not
// known), and on any error read and write again, as if the write had not
// been applied.
func blindIncrement(ctx context.Context, s *recipes.Session, path string, op *history.Op, last blindState) blindState {
	for ctx.Err() == nil {
		conn := s.Conn()
		if !last.known {
			data, st, err := conn.Get(path)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				if _, err := conn.Create(path, shared.EncodeLong(1), 0, s.ACLFor(path)); err == nil {
					op.OK(1)
					return blindState{known: true, value: 1, version: 0}
				}
				continue
			case err != nil:
				cluster.Sleep(ctx, 20*time.Millisecond)
				continue
			}
			v, err := shared.DecodeLong(data)
			if err != nil {
				op.Fail(err.Error())
				return blindState{}
			}
			last = blindState{known: true, value: v, version: st.Version}
		}
		st, err := conn.Set(path, shared.EncodeLong(last.value+1), last.version)
		if err == nil {
			op.OK(last.value + 1)
			return blindState{known: true, value: last.value + 1, version: st.Version}
		}
		// The bug: a lost answer is taken for a conflict.
		last.known = false
	}
	op.Unknown("stopped")
	return blindState{}
}
