package leader

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// RunOption configures Run.
type RunOption func(*runConfig)

type runConfig struct {
	onError func(error)
	backoff backoff
}

// Default back-off of Run after fn fails (WithBackoff).
const (
	DefaultBackoffInitial = 100 * time.Millisecond
	DefaultBackoffMax     = 10 * time.Second
)

// WithBackoff sets how long Run waits before campaigning again after fn
// returned an error: initial after the first failure, doubling with each
// further failure up to ceiling, each wait drawn at random from [d/2, d] (d the
// current step) so that failing participants do not rejoin in lock-step. A
// term whose fn returned nil, or that lasted at least ceiling, resets the step.
// Default: DefaultBackoffInitial, DefaultBackoffMax. initial <= 0 turns the
// back-off off (Run rejoins at once, as before); ceiling < initial is taken as
// initial.
func WithBackoff(initial, ceiling time.Duration) RunOption {
	return func(c *runConfig) { c.backoff = backoff{initial: initial, max: ceiling} }
}

// backoff is Run's delay between a failed term and the next campaign.
type backoff struct {
	initial, max time.Duration
	cur          time.Duration // current step; 0 after a reset
}

// next returns the wait after a term that lasted d and whose fn failed (or
// not); rnd returns a number in [0, 1). Pure but for b's own step.
func (b *backoff) next(d time.Duration, failed bool, rnd func() float64) time.Duration {
	if b.initial <= 0 {
		return 0
	}
	top := max(b.max, b.initial)
	if !failed || d >= top {
		b.cur = 0
		return 0
	}
	if b.cur == 0 {
		b.cur = b.initial
	} else {
		b.cur = min(2*b.cur, top)
	}
	half := b.cur / 2
	return half + time.Duration(rnd()*float64(b.cur-half))
}

// WithErrorHandler makes Run hand the errors fn returns to f (default: they
// are logged at warning level on the session's logger). Run requeues
// whatever fn returns.
func WithErrorHandler(f func(error)) RunOption {
	return func(c *runConfig) { c.onError = f }
}

// Run is the selector loop with automatic requeue (Curator's LeaderSelector
// with autoRequeue): campaign, call fn with a context that is done when the
// term ends (leadership may be lost) or ctx ends, resign when fn returns,
// and campaign again (at the back of the line) until ctx is done. Unlike
// kazoo's Election.run, a running fn is told the moment leadership may be
// lost: fn must return promptly once its ctx is done, and should guard
// shared writes with the term's fence (TermOf(ctx).FencedMulti).
//
// When fn returns an error, Run waits before campaigning again (exponential
// back-off with jitter and a cap, see WithBackoff; by default 50-100 ms
// after the first failure, doubling up to 10 s), so a function that fails
// at once costs a few requests a second, not a create and a delete per
// round trip; the wait ends early only when ctx is done. A term whose fn
// returned nil rejoins at once.
//
// Run returns ctx's error (recipes.ContextError) once ctx is done, or the
// first error that campaigning again cannot fix (a closed session). fn's
// errors go to the handler of WithErrorHandler and do not stop the loop.
// Cost per term: Campaign's and Release's.
func Run(ctx context.Context, e *Election, fn func(ctx context.Context) error, opts ...RunOption) error {
	if err := e.usable(ctx); err != nil {
		return err
	}
	if fn == nil {
		return ErrNilFunc
	}
	cfg := runConfig{backoff: backoff{initial: DefaultBackoffInitial, max: DefaultBackoffMax}}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	for {
		t, err := e.Campaign(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return recipes.ContextError(ctx)
			}
			return err
		}
		began := time.Now()
		ferr := runTerm(ctx, t, fn)
		lasted := time.Since(began)
		if ferr != nil {
			if cfg.onError != nil {
				cfg.onError(ferr)
			} else {
				e.s.Logger().Warn("leader: run", "path", e.path, "err", ferr)
			}
		}
		_ = t.Release(context.WithoutCancel(ctx))
		if ctx.Err() != nil {
			return recipes.ContextError(ctx)
		}
		if d := cfg.backoff.next(lasted, ferr != nil, rand.Float64); d > 0 {
			if err := sleep(ctx, d); err != nil {
				return err
			}
		}
	}
}

// sleep waits d or until ctx is done (returning ctx's error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return recipes.ContextError(ctx)
	}
}

type termKey struct{}

// TermOf returns the Term that a context given to fn by Run or Do belongs
// to (for its Fence and FencedMulti), or nil.
func TermOf(ctx context.Context) *Term {
	if ctx == nil {
		return nil
	}
	t, _ := ctx.Value(termKey{}).(*Term)
	return t
}

// runTerm calls fn with a context done when the term or ctx ends.
func runTerm(ctx context.Context, t *Term, fn func(ctx context.Context) error) error {
	fctx, cancel := context.WithCancelCause(context.WithValue(t.Context(), termKey{}, t))
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { cancel(recipes.ContextError(ctx)) })
	defer stop()
	return fn(fctx)
}

// Do waits to lead the election at path, runs fn once as leader with a
// context done when the term (or ctx) ends, and resigns (elastic-job's
// executeInLeader). It returns fn's error; if fn returned nil but the term's
// context was done before fn returned (leadership may have been lost while
// fn ran), an error wrapping ErrLost and the term's cause; otherwise
// Release's. opts configure the Election; an argument New rejects is
// returned as New returns it, and nothing is sent. Cost: Campaign's + 1
// delete.
func Do(ctx context.Context, s *recipes.Session, path string, fn func(ctx context.Context) error, opts ...Option) error {
	e, err := New(s, path, opts...)
	if err != nil {
		return err
	}
	if err := e.usable(ctx); err != nil {
		return err
	}
	if fn == nil {
		return ErrNilFunc
	}
	t, err := e.Campaign(ctx)
	if err != nil {
		return err
	}
	ferr := runTerm(ctx, t, fn)
	lost := context.Cause(t.Context())
	rerr := t.Release(context.WithoutCancel(ctx))
	switch {
	case ferr != nil:
		return ferr
	case lost != nil && !errors.Is(lost, recipes.ErrReleased):
		return fmt.Errorf("%w: %s: %w", ErrLost, path, lost)
	case errors.Is(rerr, recipes.ErrReleased):
		return nil // the term ended after fn returned: fn ran as leader
	}
	return rerr
}
