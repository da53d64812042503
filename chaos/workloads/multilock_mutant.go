package workloads

import (
	"context"
	"errors"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// MultiLockPartial is the multi-lock all-or-nothing mutant and its twin.
// The target (c1) takes paths p0 and p1 together; a bystander (c2) holds
// p1 alone for three session timeouts at a time, so the target spends most
// of its time holding p0 and waiting for p1; another bystander (c3) takes
// p0 alone, briefly and often. The target holds for 100 ms once it has
// both.
//
// The twin's target uses lock.MultiMutex, which holds only if the session
// that took the first path is still the session when the last is taken.
// With Mutant set, the target is built from one lock.Mutex per path and
// trusts the context of the last path it took: when its session expires
// while it waits for p1 (partition-expire aimed at it), p0 goes with the
// session and c3 takes it, the wait for p1 goes on under the new session
// (as Mutex.Lock does), and once p1 is free the mutant believes it holds
// both while c3 holds p0: mutual-exclusion catches it (two holders of p0,
// and a token that went back). Without a fault the session never changes
// and the mutant is correct.
type MultiLockPartial struct {
	Mutant bool
}

// Name is "multilock-partial-mutant", or "multilock-partial" for the twin.
func (w *MultiLockPartial) Name() string { return mutantName("multilock-partial", w.Mutant) }

// PacedOn: the target waits in its acquire (p0 taken, p1 held by c2 for
// three session timeouts); its faults are aimed at that wait.
func (w *MultiLockPartial) PacedOn() (string, history.Fn) { return "c1", history.FnAcquire }

// Checkers: mutual-exclusion, no-nodes-left. (Not liveness: the target
// waits for the bystander's long holdings by design.)
func (w *MultiLockPartial) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.MutualExclusion(1), checkers.NoNodesLeft()}
}

// Run runs the target and the two bystanders until ctx is done; then,
// sessions still open, it records the nodes left, and closes every session.
func (w *MultiLockPartial) Run(ctx context.Context, env *cluster.Env) error {
	base, paths, setup, err := multiPaths(ctx, env)
	if err != nil {
		return err
	}
	defer setup.Close()
	cs, closeLinks, err := mutantClients(env, 3, 1)
	if err != nil {
		return err
	}
	defer closeLinks()
	return runMulti(ctx, env, setup, base, cs[:3], func(i int) (time.Duration, func(*recipes.Session) (multiAcquire, error)) {
		switch i {
		case 0:
			if w.Mutant {
				return 100 * time.Millisecond, func(s *recipes.Session) (multiAcquire, error) { return partialMulti(s, paths[:2]) }
			}
			return 100 * time.Millisecond, libraryMulti(paths[:2])
		case 1:
			return 3 * env.SessionTimeout, libraryMulti(paths[1:2])
		}
		return 10 * time.Millisecond, libraryMulti(paths[:1])
	})
}

// partialMulti is the mutant multi-lock: a Mutex per path, taken in order,
// with no check that the earlier ones survived the wait for the later
// ones, and the last one's context taken for the whole.
func partialMulti(s *recipes.Session, paths []string) (multiAcquire, error) {
	ms := make([]*lock.Mutex, len(paths))
	for i, p := range paths {
		m, err := lock.New(s, p)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	unlock := func(ctx context.Context, n int) error {
		var errs []error
		for i := n - 1; i >= 0; i-- {
			if err := ms[i].Unlock(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	return func(ctx context.Context) (*multiHeld, error) {
		for i, m := range ms {
			if err := m.Lock(ctx); err != nil {
				_ = unlock(context.WithoutCancel(ctx), i)
				return nil, err
			}
		}
		h := &multiHeld{paths: paths, held: ms[len(ms)-1].Context()}
		for _, m := range ms {
			h.fences = append(h.fences, m.Fence())
		}
		h.release = func(ctx context.Context) error { return unlock(ctx, len(ms)) }
		return h, nil
	}, nil
}
