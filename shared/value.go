package shared

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Versioned is a value as read from its node: what TrySet compares against
// (Version) and what orders the changes a watcher sees (Zxid).
//
// Version is the node's data version: it counts the writes to this node and
// starts again at 0 if the node is deleted and created again, so a TrySet
// with a version read before such a re-creation may succeed against the new
// node. The recipes never delete the node; whoever does takes that risk.
//
// A compare-and-set never uses version -1: ZooKeeper reads it as "any
// version", which would make it a blind set, so TrySet and FencedTrySet
// refuse it (recipes.ErrBadArgument). Other versions, negative ones
// included, are compared as they are: ZooKeeper's version is an int32 that
// goes negative after 2^31 writes to the node, and a node that is at
// version -1 then cannot be compared against until it is written again.
//
// Zxid is the node's modification zxid: ZooKeeper's id of the write that
// set the value. It grows with every change, across re-creations too.
type Versioned[T any] struct {
	Value   T
	Version int32
	Zxid    int64
}

// Value is a byte string shared through one persistent node: Curator's
// SharedValue, whose node holds the bytes unchanged. The node is created
// with the seed on first use (Get, Watch) if it is missing.
//
// A Value is safe for concurrent use; it keeps no state but its path and
// seed.
type Value struct {
	s    *recipes.Session
	path string
	seed []byte
}

// NewValue returns the shared value at path, seeded with seed (copied).
// Nothing is sent to ZooKeeper. It fails, wrapping a sentinel, on a nil
// session (recipes.ErrNilSession), an invalid path or one in the reserved
// /zookeeper tree (recipes.ErrInvalidPath), or a seed or path so long that
// the node's create would exceed the session's request limit
// (recipes.ErrDataTooLarge).
func NewValue(s *recipes.Session, path string, seed []byte) (*Value, error) {
	if s == nil {
		return nil, fmt.Errorf("shared: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateWritePath(path); err != nil {
		return nil, fmt.Errorf("shared: %w", err)
	}
	if err := recipes.CheckRequest(s.MaxData(), &zk.CreateRequest{Path: path, Data: seed, Acl: s.ACLFor(path)}); err != nil {
		return nil, fmt.Errorf("shared: seed of %s: %w", path, err)
	}
	return &Value{s: s, path: path, seed: bytes.Clone(seed)}, nil
}

// Path returns the node's path.
func (v *Value) Path() string { return v.path }

func (v *Value) check(ctx context.Context) error {
	if v == nil {
		return ErrNilReceiver
	}
	if err := recipes.ContextError(ctx); err != nil {
		return fmt.Errorf("shared %s: %w", v.path, err)
	}
	return nil
}

type read struct {
	data []byte
	stat *zk.Stat
}

// Get returns the current value and its version. Cost: 1 getData; when the
// node is missing, 1 create with the seed (and 1 createContainer per missing
// parent level; on an authenticated Session's first create under the
// parent, 1 getACL: see recipes.CreateUnder, whose ErrOpenParent it
// returns) and 1 getData more. Nothing is sent when ctx is done.
func (v *Value) Get(ctx context.Context) (Versioned[[]byte], error) {
	if err := v.check(ctx); err != nil {
		return Versioned[[]byte]{}, err
	}
	return v.get(ctx)
}

func (v *Value) get(ctx context.Context) (Versioned[[]byte], error) {
	for {
		r, err := recipes.Do(ctx, v.s, func(conn *zk.Conn, _ int64) (read, error) {
			data, stat, err := conn.Get(v.path)
			return read{data, stat}, err
		})
		switch {
		case err == nil:
			return Versioned[[]byte]{Value: r.data, Version: r.stat.Version, Zxid: r.stat.Mzxid}, nil
		case recipes.Stopped(err):
			return Versioned[[]byte]{}, fmt.Errorf("shared %s: %w", v.path, err)
		case errors.Is(err, zk.ErrNoNode):
			if err := v.create(ctx); err != nil {
				return Versioned[[]byte]{}, err
			}
		default:
			return Versioned[[]byte]{}, fmt.Errorf("shared: get %s: %w", v.path, err)
		}
	}
}

// create makes the node with the seed; a node that exists (someone else's
// create, or our own retried one) is fine.
func (v *Value) create(ctx context.Context) error {
	parent, _ := zkpath.Split(v.path)
	err := recipes.CreateUnder(ctx, v.s, parent, func(conn *zk.Conn, _ int64) error {
		_, err := conn.Create(v.path, v.seed, 0, v.s.ACLFor(v.path))
		return err
	})
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		return nil
	case recipes.Stopped(err):
		return fmt.Errorf("shared %s: %w", v.path, err)
	}
	return fmt.Errorf("shared: create %s: %w", v.path, err)
}

// TrySet writes next only if the node is still at prev.Version. It returns
// the value written and true, or, when the version had moved on (another
// write came first), the current value and false. Cost: 1 setData, plus
// what a Get costs when it fails. A write whose outcome the connection's
// failure hid returns an error wrapping ErrUncertain (it may still be
// applied): it is never sent twice. A prev.Version of -1 is refused
// (recipes.ErrBadArgument, see Versioned). Nothing is sent when ctx is done
// or the arguments are refused.
func (v *Value) TrySet(ctx context.Context, prev Versioned[[]byte], next []byte) (Versioned[[]byte], bool, error) {
	return v.set(ctx, prev.Version, compareAndSet, next)
}

// anyVersion is ZooKeeper's version for "whatever the version": a set with
// it is blind. Only Set sends it.
const anyVersion = -1

// checkVersion refuses a compare-and-set against anyVersion.
func (v *Value) checkVersion(version int32) error {
	if version == anyVersion {
		return fmt.Errorf("shared: %w: compare-and-set of %s against version -1 (ZooKeeper's \"any version\")", recipes.ErrBadArgument, v.path)
	}
	return nil
}

// Set writes next whatever the current version. Cost: 1 setData (and what a
// Get costs when the node is missing: it is created with the seed, then
// set). ErrUncertain as for TrySet.
func (v *Value) Set(ctx context.Context, next []byte) (Versioned[[]byte], error) {
	r, _, err := v.set(ctx, anyVersion, blindSet, next)
	return r, err
}

// setMode says whether set is a compare-and-set.
type setMode bool

const (
	blindSet      setMode = false // whatever the version (Set)
	compareAndSet setMode = true  // only at version (TrySet)
)

// set writes next at version, a compare-and-set when compareAndSet (anyVersion is
// refused then), a blind set otherwise (version is anyVersion).
func (v *Value) set(ctx context.Context, version int32, cas setMode, next []byte) (Versioned[[]byte], bool, error) {
	if err := v.check(ctx); err != nil {
		return Versioned[[]byte]{}, false, err
	}
	if cas {
		if err := v.checkVersion(version); err != nil {
			return Versioned[[]byte]{}, false, err
		}
	}
	if err := recipes.CheckRequest(v.s.MaxData(), &zk.SetDataRequest{Path: v.path, Data: next, Version: version}); err != nil {
		return Versioned[[]byte]{}, false, fmt.Errorf("shared: set %s: %w", v.path, err)
	}
	next = bytes.Clone(next)
	for {
		var sent error // the write's own answer: a connection error is not retried by Do
		stat, err := recipes.Do(ctx, v.s, func(conn *zk.Conn, _ int64) (*zk.Stat, error) {
			st, err := conn.Set(v.path, next, version)
			if recipes.IsConnErr(err) {
				sent = err
				return nil, nil
			}
			return st, err
		})
		switch {
		case sent != nil:
			return Versioned[[]byte]{}, false, fmt.Errorf("%w: set %s: %w", ErrUncertain, v.path, sent)
		case err == nil:
			return Versioned[[]byte]{Value: next, Version: stat.Version, Zxid: stat.Mzxid}, true, nil
		case recipes.Stopped(err):
			return Versioned[[]byte]{}, false, fmt.Errorf("shared %s: %w", v.path, err)
		case errors.Is(err, zk.ErrBadVersion):
			cur, err := v.get(ctx)
			return cur, false, err
		case errors.Is(err, zk.ErrNoNode) && cas == blindSet:
			if err := v.create(ctx); err != nil {
				return Versioned[[]byte]{}, false, err
			}
		case errors.Is(err, zk.ErrNoNode):
			// Deleted: the version compared against is gone with it.
			cur, err := v.get(ctx)
			return cur, false, err
		default:
			return Versioned[[]byte]{}, false, fmt.Errorf("shared: set %s: %w", v.path, err)
		}
	}
}

// Fencer is what a fenced write needs of a holding: a multi guarded by the
// holding's fence. Every recipes.Held (lock.Permit, leader.Term, queue.Claim,
// recipes.Holding) has it, and so do lock.Mutex and rwlock.RWMutex while
// they hold.
type Fencer interface {
	FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error)
}

// FencedTrySet is TrySet committed only while h is held: the write and a
// version check of h's node go in one multi, so ZooKeeper rejects it (an
// error wrapping recipes.ErrFenced) once h is lost, however late the
// request arrives. Cost: 1 multi, plus what a Get costs when the version
// had moved on (false, nil). ErrUncertain, and the refusal of version -1,
// as for TrySet.
func (v *Value) FencedTrySet(ctx context.Context, h Fencer, prev Versioned[[]byte], next []byte) (Versioned[[]byte], bool, error) {
	if err := v.check(ctx); err != nil {
		return Versioned[[]byte]{}, false, err
	}
	if h == nil {
		return Versioned[[]byte]{}, false, fmt.Errorf("shared: %w: nil holding", recipes.ErrBadArgument)
	}
	if err := v.checkVersion(prev.Version); err != nil {
		return Versioned[[]byte]{}, false, err
	}
	if err := recipes.ContextError(ctx); err != nil {
		return Versioned[[]byte]{}, false, fmt.Errorf("shared %s: %w", v.path, err)
	}
	if _, err := v.s.WaitUsable(ctx); err != nil {
		return Versioned[[]byte]{}, false, fmt.Errorf("shared %s: %w", v.path, err)
	}
	next = bytes.Clone(next)
	res, err := h.FencedMulti(ctx, &zk.SetDataRequest{Path: v.path, Data: next, Version: prev.Version})
	switch {
	case err == nil:
		st := res[0].Stat
		return Versioned[[]byte]{Value: next, Version: st.Version, Zxid: st.Mzxid}, true, nil
	case errors.Is(err, recipes.ErrFenced), recipes.Stopped(err):
		return Versioned[[]byte]{}, false, fmt.Errorf("shared %s: %w", v.path, err)
	case len(res) > 0 && (errors.Is(res[0].Error, zk.ErrBadVersion) || errors.Is(res[0].Error, zk.ErrNoNode)):
		cur, err := v.get(ctx)
		return cur, false, err
	case recipes.IsConnErr(err):
		return Versioned[[]byte]{}, false, fmt.Errorf("%w: fenced set %s: %w", ErrUncertain, v.path, err)
	}
	return Versioned[[]byte]{}, false, fmt.Errorf("shared: fenced set %s: %w", v.path, err)
}

// Watch streams the value: first the current one, then each change seen,
// every one with a larger Zxid than the one before (never back, even
// across reconnections, session loss or a re-created node). Values written
// in quick succession may be skipped; the latest is never missed. The
// stream ends when ctx ends (Err: ctx's error), when Stop is called (Err
// nil), or on an error it does not retry (Err says which). Cost: 1 getData
// per change seen (with a data watch; the Session shares one watch per path
// among its waiters), and 1 create with the seed when the node is missing. One goroutine per
// Watch.
func (v *Value) Watch(ctx context.Context) *recipes.Stream[Versioned[[]byte]] {
	return watch(ctx, v, func(b []byte) ([]byte, error) { return b, nil })
}

// watch runs the watcher loop for a Value and decodes each value.
func watch[T any](ctx context.Context, v *Value, decode func([]byte) (T, error)) *recipes.Stream[Versioned[T]] {
	if v == nil {
		return recipes.StartStream(ctx, func(context.Context, chan<- Versioned[T]) error { return ErrNilReceiver })
	}
	return recipes.StartStream(ctx, func(ctx context.Context, out chan<- Versioned[T]) error {
		last := int64(-1)
		for {
			r, err := recipes.Do(ctx, v.s, func(_ *zk.Conn, _ int64) (watched, error) {
				data, stat, w, err := v.s.WatchData(ctx, v.path)
				return watched{data, stat, w}, err
			})
			switch {
			case recipes.Stopped(err):
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("shared %s: %w", v.path, err)
			case errors.Is(err, zk.ErrNoNode):
				// Missing: created with the seed, as Get does, so a watcher
				// never waits for a first writer.
				if err := v.create(ctx); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				continue
			case err != nil:
				return fmt.Errorf("shared: watch %s: %w", v.path, err)
			}
			if r.stat.Mzxid > last {
				val, err := decode(r.data)
				if err != nil {
					r.w.Close()
					return fmt.Errorf("shared: watch %s: %w", v.path, err)
				}
				select {
				case out <- Versioned[T]{Value: val, Version: r.stat.Version, Zxid: r.stat.Mzxid}:
					last = r.stat.Mzxid
				case <-ctx.Done():
					r.w.Close()
					return nil
				}
			}
			select {
			case <-r.w.Fired():
				r.w.Close()
			case <-ctx.Done():
				r.w.Close()
				return nil
			}
		}
	})
}

type watched struct {
	data []byte
	stat *zk.Stat
	w    *recipes.Watch
}
