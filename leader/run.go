package leader

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// RunOption configures Run.
type RunOption func(*runConfig)

type runConfig struct {
	onError func(error)
}

// OnError receives the errors fn returns (default: logged at warning level
// on the session's logger). Run requeues whatever fn returns.
func OnError(f func(error)) RunOption {
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
// Run returns ctx's cause once ctx is done, or the first error that
// campaigning again cannot fix (closed session, bad arguments). fn's errors
// go to OnError and do not stop the loop. Cost per term: Campaign's and
// Resign's.
func Run(ctx context.Context, e *Election, fn func(ctx context.Context) error, opts ...RunOption) error {
	if err := e.usable(ctx); err != nil {
		return err
	}
	if fn == nil {
		return ErrNilFunc
	}
	cfg := runConfig{}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	for {
		t, err := e.Campaign(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return err
		}
		if err := runTerm(ctx, t, fn); err != nil {
			if cfg.onError != nil {
				cfg.onError(err)
			} else {
				e.s.Logger().Warn("leader: run", "path", e.path, "err", err)
			}
		}
		_ = t.Resign(context.WithoutCancel(ctx))
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
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
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stop()
	return fn(fctx)
}

// Do waits to lead the election at path, runs fn once as leader with a
// context done when the term (or ctx) ends, and resigns (elastic-job's
// executeInLeader). It returns fn's error; if fn returned nil but the term's
// context was done before fn returned (leadership may have been lost while
// fn ran), an error wrapping ErrLost and the term's cause; otherwise
// Resign's. opts configure the Election. Cost: Campaign's + 1 delete.
func Do(ctx context.Context, s *recipes.Session, path string, fn func(ctx context.Context) error, opts ...Option) error {
	e := New(s, path, opts...)
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
	rerr := t.Resign(context.WithoutCancel(ctx))
	switch {
	case ferr != nil:
		return ferr
	case lost != nil && !errors.Is(lost, recipes.ErrReleased):
		return fmt.Errorf("%w: %s: %w", ErrLost, path, lost)
	}
	return rerr
}
