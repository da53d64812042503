package shared

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Long is a 64-bit counter in one persistent node: Curator's
// DistributedAtomicLong, whose node holds the long as 8 bytes, big endian
// (a missing node or empty data reads as 0), so Go and Java processes can
// share it.
//
// Every change is optimistic: read the node, write the new value with the
// version read, and try again when another writer came first, up to the
// attempts given by WithAttempts. With WithPromotion, a change that ran out
// of optimistic attempts takes a lock (package lock, Curator's
// InterProcessMutex names, so Curator's promoted DistributedAtomicLong
// takes the same lock) and tries again while holding it; the writes stay
// compare-and-set, so writers that do not take the lock stay correct.
//
// The outcome is exact: a Result says whether the change was applied
// (Succeeded, with the values before and after) or not (another writer kept
// coming first); a write whose answer the connection lost returns
// ErrUncertain instead, because ZooKeeper may still apply it. A write is
// never sent twice.
//
// A Long is safe for concurrent use. Its promotions take one lock.Mutex,
// so they take it one at a time: a change that needs the lock while
// another change of the same Long is promoted waits for that one to
// release it, in the process (nothing sent), until its ctx ends. Besides
// that wait, a Long keeps no state but its options.
type Long struct {
	s        *recipes.Session
	path     string
	attempts int
	promoted *lock.Mutex
	// promoting holds one token while a change of this Long is promoted
	// (takes, holds or releases promoted): promoted is one Mutex, which
	// refuses a second Lock while it holds (lock.ErrAlreadyHeld).
	promoting chan struct{}
}

// Result is the outcome of a change to a Long. When Succeeded, Pre is the
// value replaced and Post the value written; otherwise Pre is the last
// value read and Post is zero.
type Result struct {
	Succeeded bool
	Pre, Post int64
}

// LongOption configures a Long.
type LongOption func(*longConfig)

type longConfig struct {
	attempts int
	promote  bool
	lockPath string
	lockOpts []lock.Option
}

// WithAttempts sets how many optimistic compare-and-sets a change tries
// before it gives up (Result.Succeeded false) or, with WithPromotion, takes
// the lock. Default 10; at least 1.
func WithAttempts(n int) LongOption {
	return func(c *longConfig) { c.attempts = n }
}

// WithPromotion makes a change that ran out of optimistic attempts take the
// lock at lockPath (a lock.Mutex with opts) and try the same number of
// attempts again while holding it. NewLong refuses a lockPath or opts that
// lock.New refuses, the empty path included.
func WithPromotion(lockPath string, opts ...lock.Option) LongOption {
	return func(c *longConfig) { c.promote, c.lockPath, c.lockOpts = true, lockPath, opts }
}

// NewLong returns the counter at path. Nothing is sent to ZooKeeper. It
// fails, wrapping a sentinel, on a nil session (recipes.ErrNilSession), an
// invalid path (recipes.ErrInvalidPath), a path too long for a request
// (recipes.ErrDataTooLarge), attempts below 1 (recipes.ErrBadArgument), or
// what lock.New refuses for the promotion lock (its error, which also
// wraps recipes.ErrBadArgument: an empty or invalid path is
// recipes.ErrInvalidPath too).
func NewLong(s *recipes.Session, path string, opts ...LongOption) (*Long, error) {
	if s == nil {
		return nil, fmt.Errorf("shared: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateWritePath(path); err != nil {
		return nil, fmt.Errorf("shared: %w", err)
	}
	if err := recipes.CheckRequest(s.MaxData(), &zk.CreateRequest{Path: path, Data: make([]byte, 8), Acl: s.ACLFor(path)}); err != nil {
		return nil, fmt.Errorf("shared: %s: %w", path, err)
	}
	cfg := longConfig{attempts: 10}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.attempts < 1 {
		return nil, fmt.Errorf("shared: %w: %d attempts", recipes.ErrBadArgument, cfg.attempts)
	}
	l := &Long{s: s, path: path, attempts: cfg.attempts}
	if cfg.promote {
		m, err := lock.New(s, cfg.lockPath, cfg.lockOpts...)
		if err != nil {
			return nil, fmt.Errorf("shared: %w: promotion lock: %w", recipes.ErrBadArgument, err)
		}
		l.promoted, l.promoting = m, make(chan struct{}, 1)
	}
	return l, nil
}

// EncodeLong returns n as a Long's node holds it: 8 bytes, big endian. Pure.
func EncodeLong(n int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(n))
}

// DecodeLong reads a Long's node data: empty data is 0 (as Curator reads
// it), 8 bytes are the value, anything else is ErrCorrupt. Pure.
func DecodeLong(b []byte) (int64, error) {
	switch len(b) {
	case 0:
		return 0, nil
	case 8:
		return int64(binary.BigEndian.Uint64(b)), nil
	}
	return 0, fmt.Errorf("%w: %d bytes for a long", ErrCorrupt, len(b))
}

// Path returns the node's path.
func (l *Long) Path() string { return l.path }

// Get returns the current value: 0 when the node does not exist. Cost:
// 1 getData.
func (l *Long) Get(ctx context.Context) (int64, error) {
	if l == nil {
		return 0, ErrNilReceiver
	}
	if err := recipes.ContextError(ctx); err != nil {
		return 0, fmt.Errorf("shared %s: %w", l.path, err)
	}
	n, _, err := l.read(ctx)
	return n, err
}

// Add adds delta. A sum that does not fit in an int64 is not written (nor
// wrapped): once the value is read, the change ends with an error wrapping
// ErrOverflow and recipes.ErrBadArgument, and a Result not Succeeded whose
// Pre is the value read. Cost per attempt: 1 getData and 1 setData (1
// create instead when the node is missing, through recipes.CreateUnder: +1
// createContainer per missing parent level, +1 getACL on an authenticated
// Session's first create under the parent); with promotion, the lock's
// cost and up to as many attempts again (after the wait, sending nothing,
// for another promotion of this Long under way).
func (l *Long) Add(ctx context.Context, delta int64) (Result, error) {
	return l.change(ctx, func(cur int64) (int64, bool, error) {
		next, ok := addExact(cur, delta)
		if !ok {
			return 0, false, fmt.Errorf("%w (%w): %d%+d at %s", ErrOverflow, recipes.ErrBadArgument, cur, delta, l.path)
		}
		return next, true, nil
	})
}

// addExact returns a+b and true, or false when the sum does not fit in an
// int64. Pure.
func addExact(a, b int64) (int64, bool) {
	sum := a + b
	// Only operands of the same sign overflow, and then the sum's sign
	// differs from theirs.
	if (a < 0) == (b < 0) && (sum < 0) != (a < 0) {
		return 0, false
	}
	return sum, true
}

// Increment adds 1 (ErrOverflow at math.MaxInt64); costs as Add.
func (l *Long) Increment(ctx context.Context) (Result, error) { return l.Add(ctx, 1) }

// Decrement subtracts 1 (ErrOverflow at math.MinInt64); costs as Add.
func (l *Long) Decrement(ctx context.Context) (Result, error) { return l.Add(ctx, -1) }

// CompareAndSet writes next only if the value is expected; Succeeded says
// whether it did. A value other than expected ends it at once (no more
// attempts); attempts are spent only on writers that changed the node
// between our read and our write.
func (l *Long) CompareAndSet(ctx context.Context, expected, next int64) (Result, error) {
	return l.change(ctx, func(cur int64) (int64, bool, error) { return next, cur == expected, nil })
}

// TrySet writes next whatever the value is, as long as no writer comes
// between our read and our write within the attempts.
func (l *Long) TrySet(ctx context.Context, next int64) (Result, error) {
	return l.change(ctx, func(int64) (int64, bool, error) { return next, true, nil })
}

// read returns the value and the version to compare against (-1: the node
// does not exist).
func (l *Long) read(ctx context.Context) (int64, int32, error) {
	r, err := recipes.Do(ctx, l.s, func(conn *zk.Conn, _ int64) (read, error) {
		data, stat, err := conn.Get(l.path)
		return read{data, stat}, err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return 0, -1, nil
	case recipes.Stopped(err):
		return 0, 0, fmt.Errorf("shared %s: %w", l.path, err)
	case err != nil:
		return 0, 0, fmt.Errorf("shared: get %s: %w", l.path, err)
	}
	n, err := DecodeLong(r.data)
	if err != nil {
		return 0, 0, fmt.Errorf("shared: %s: %w", l.path, err)
	}
	return n, r.stat.Version, nil
}

// change applies f to the value: f returns the value to write and whether
// to write it, or an error that ends the change before anything is written.
func (l *Long) change(ctx context.Context, f func(cur int64) (int64, bool, error)) (Result, error) {
	if l == nil {
		return Result{}, ErrNilReceiver
	}
	if err := recipes.ContextError(ctx); err != nil {
		return Result{}, fmt.Errorf("shared %s: %w", l.path, err)
	}
	r, done, err := l.optimistic(ctx, f)
	if err != nil || done || l.promoted == nil {
		return r, err
	}
	// One promotion of this Long at a time: wait for the one under way.
	select {
	case l.promoting <- struct{}{}:
	case <-ctx.Done():
		return r, fmt.Errorf("shared %s: promotion: %w", l.path, recipes.ContextError(ctx))
	}
	defer func() { <-l.promoting }()
	if err := l.promoted.Lock(ctx); err != nil {
		return r, fmt.Errorf("shared %s: promotion: %w", l.path, err)
	}
	defer func() {
		// A release that fails leaves our lock node to its session (the
		// lock's own guaranteed delete), so the change's result stands.
		_ = l.promoted.Unlock(context.WithoutCancel(ctx))
	}()
	r, _, err = l.optimistic(ctx, f)
	return r, err
}

// optimistic runs up to l.attempts compare-and-sets. done reports an
// outcome that more attempts would not change (success, or f refusing).
func (l *Long) optimistic(ctx context.Context, f func(cur int64) (int64, bool, error)) (r Result, done bool, err error) {
	parent, _ := zkpath.Split(l.path)
	for tried := 0; tried < l.attempts; {
		cur, version, err := l.read(ctx)
		if err != nil {
			return Result{}, true, err
		}
		next, ok, err := f(cur)
		if err != nil || !ok {
			return Result{Pre: cur}, true, err
		}
		r = Result{Pre: cur}
		hooks.BeforeWrite(l.path)
		var sent error
		write := func(conn *zk.Conn, _ int64) error {
			var err error
			if version < 0 {
				_, err = conn.Create(l.path, EncodeLong(next), 0, l.s.ACLFor(l.path))
			} else {
				_, err = conn.Set(l.path, EncodeLong(next), version)
			}
			if recipes.IsConnErr(err) {
				sent = err
				return nil
			}
			return err
		}
		if version < 0 {
			err = recipes.CreateUnder(ctx, l.s, parent, write)
		} else {
			err = recipes.Exec(ctx, l.s, write)
		}
		switch {
		case sent != nil:
			return Result{}, true, fmt.Errorf("%w: %s: %w", ErrUncertain, l.path, sent)
		case err == nil:
			return Result{Succeeded: true, Pre: cur, Post: next}, true, nil
		case recipes.Stopped(err):
			return Result{}, true, fmt.Errorf("shared %s: %w", l.path, err)
		case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrNoNode):
			// Another writer came first: an attempt spent; read again.
			tried++
		default:
			return Result{}, true, fmt.Errorf("shared: set %s: %w", l.path, err)
		}
	}
	return r, false, nil
}
