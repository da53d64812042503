package workloads

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/shared"
)

// SemaphoreMax is the workload of a count-based lock.Semaphore
// (lock.NewSemaphoreCount): every client, with its own recipes.Session on
// its own link, loops Acquire, a short pause inside the lease, and Release,
// on a semaphore whose maximum is a shared.Count that a separate client
// ("max", on a link of its own that faults reach too) changes every Every,
// through the values 3, 1, 2 over and over. Each acquisition is recorded as
// an acquire operation (when it began) and a holding (acquired to released
// or lost, as holders.go records them); each change of the count as a
// set-max operation on the semaphore's path, the initial 3 included (ok, or
// unknown when its answer was lost).
//
// Checked by: never more holders than the maximum in force
// (semaphore-max), liveness after every heal, and no nodes left once the
// clients quiesced and after every session closed.
//
// SemaphoreCache runs it as a mutant and twin.
type SemaphoreMax struct {
	// Hold is the time a lease is held. Default 20 ms.
	Hold time.Duration
	// Every is the pause between changes of the maximum. Default 300 ms.
	Every time.Duration
}

// maxCycle is the values the maximum takes in turn.
var maxCycle = []int32{3, 1, 2}

// Name is "semaphore-max".
func (w *SemaphoreMax) Name() string { return "semaphore-max" }

// Checkers: semaphore-max, liveness, no-nodes-left.
func (w *SemaphoreMax) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.SemaphoreMax(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// semaphoreMaxPaths returns the semaphore's path and its count's.
func semaphoreMaxPaths(env *cluster.Env) (path, count string) {
	return env.Root + "/semaphore-max", env.Root + "/semaphore-max-count"
}

// Run makes <root>/semaphore-max and its count <root>/semaphore-max-count =
// 3, then runs env.Clients holders and the changer until ctx is done.
func (w *SemaphoreMax) Run(ctx context.Context, env *cluster.Env) error {
	hold, every := w.Hold, w.Every
	if hold == 0 {
		hold = 20 * time.Millisecond
	}
	if every == 0 {
		every = 300 * time.Millisecond
	}
	path, countPath := semaphoreMaxPaths(env)
	spec := holderSpec{path: path, hold: hold, invokes: true, acquirer: countSemaphore(path, countPath)}
	setup, err := setupSemaphoreMax(ctx, env, spec, countPath)
	if err != nil {
		return err
	}
	defer setup.Close()
	changer, err := env.NewClient("max")
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	var changeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		changeErr = changeMax(ctx, env, changer, path, countPath, func(i int) (int32, time.Duration) {
			return maxCycle[(i+1)%len(maxCycle)], every
		})
	}()
	err = runHolderClients(ctx, env, setup, spec, env.Clients, func(i int) (*cluster.Client, error) {
		return env.NewClient(fmt.Sprintf("c%d", i+1))
	})
	wg.Wait()
	if err == nil {
		err = changeErr
	}
	return err
}

// setupSemaphoreMax makes spec's path and the count node with the first
// value of maxCycle, recording that value as the maximum's first change.
func setupSemaphoreMax(ctx context.Context, env *cluster.Env, spec holderSpec, countPath string) (*zk.Conn, error) {
	setup, err := setupHolders(ctx, env, spec)
	if err != nil {
		return nil, err
	}
	op := env.Rec.Client("max").Invoke(history.FnSetMax, spec.path, int64(maxCycle[0]))
	if _, err := setup.Create(countPath, shared.EncodeCount(maxCycle[0]), 0, env.ACL()); err != nil {
		op.Unknown(err.Error())
		setup.Close()
		return nil, fmt.Errorf("chaos: setup of %s: %w", countPath, err)
	}
	op.OK(int64(maxCycle[0]))
	return setup, nil
}

// countSemaphore is the acquirer of a lock.Semaphore at path whose maximum
// is the count at countPath.
func countSemaphore(path, countPath string) func(*recipes.Session, int) (func(context.Context) (*holding, error), error) {
	return func(s *recipes.Session, _ int) (func(context.Context) (*holding, error), error) {
		count, err := shared.NewCount(s, countPath, maxCycle[0])
		if err != nil {
			return nil, err
		}
		sem, err := lock.NewSemaphoreCount(s, path, count)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*holding, error) {
			l, err := sem.Acquire(ctx)
			if err != nil {
				return nil, err
			}
			return &holding{held: l.Context(), fence: l.Fence(), release: l.Release}, nil
		}, nil
	}
}

// changeMax sets the count at countPath, through client c's own session,
// until ctx is done: change i (from 0) waits the pause next(i) returns and
// writes its value, unless it is the value in force. Each write is recorded
// as a set-max operation on key: ok, or unknown when it failed (a write
// whose answer was lost may still be applied). The count starts at
// maxCycle[0].
func changeMax(ctx context.Context, env *cluster.Env, c *cluster.Client, key, countPath string, next func(i int) (int32, time.Duration)) error {
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	count, err := shared.NewCount(s, countPath, maxCycle[0])
	if err != nil {
		return err
	}
	cur, known := maxCycle[0], true
	for i := 0; ; i++ {
		v, pause := next(i)
		if !cluster.Sleep(ctx, pause) {
			return nil
		}
		if known && v == cur {
			continue
		}
		op := c.Log.Invoke(history.FnSetMax, key, int64(v))
		if _, err := count.Set(ctx, v); err != nil {
			op.Unknown(err.Error())
			known = false // the next value is written, whatever it is
			continue
		}
		op.OK(int64(v))
		cur, known = v, true
	}
}
