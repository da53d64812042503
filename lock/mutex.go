package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/internal/lockopt"
	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Mutex is a distributed exclusive lock at a ZooKeeper path: each contender
// creates a protected ephemeral sequential node under the path, the lowest
// sequence holds, and each waiter watches only the node right ahead of it.
//
// Invariant: at most one Mutex (in any process, in any compatible client)
// holds a given path at a time, as long as holders stop when Context() is
// done; fenced writes (FencedMulti) are rejected by ZooKeeper once the
// holding is gone, even if the holder does not stop.
//
// Wire format: Curator's InterProcessMutex by default
// ("_c_<uuid36>-lock-<seq>", ordered by the digits after the last "lock-"),
// or kazoo's Lock ("<uuid hex32>__lock__<seq>", blocked by readers too) with
// WithDialect(recipes.Kazoo). Nodes of other names under the path are
// ignored.
//
// A Mutex is not reentrant: Go has no goroutine identity to tie a holding
// to, so a second Lock on a holding Mutex returns ErrAlreadyHeld instead of
// deadlocking or silently succeeding. Use one Mutex value per would-be
// holder. A Mutex is safe for concurrent use (calls are serialised on its
// own state; Lock does not hold a Go lock while waiting).
type Mutex struct {
	s    *recipes.Session
	path string
	cfg  lockopt.Config

	mu   sync.Mutex
	busy bool // a Lock or TryLock is in progress
	h    *recipes.Holding
}

// New returns a Mutex on path. It sends nothing. It fails, wrapping a
// sentinel, on a nil session (recipes.ErrNilSession), an invalid path or
// one in the reserved /zookeeper tree (recipes.ErrInvalidPath), data
// (WithData) larger than the session's request limit
// (recipes.ErrDataTooLarge) or a dialect without lock names (ErrDialect
// and recipes.ErrBadArgument).
func New(s *recipes.Session, path string, opts ...Option) (*Mutex, error) {
	cfg := config(opts)
	if err := checkArgs(s, path, cfg, recipes.RoleLock); err != nil {
		return nil, err
	}
	return &Mutex{s: s, path: path, cfg: cfg}, nil
}

// checkArgs validates what New and NewSemaphore share: the session, the
// path, the data, and the dialect's names for role.
func checkArgs(s *recipes.Session, path string, c lockopt.Config, role recipes.Role) error {
	if s == nil {
		return fmt.Errorf("lock: %w", recipes.ErrNilSession)
	}
	if err := recipes.ValidateParentPath(path); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if err := recipes.CheckData(c.Data, s.MaxData()); err != nil {
		return fmt.Errorf("lock: data: %w", err)
	}
	if !c.Dialect.Supports(role) {
		return fmt.Errorf("%w (%w): dialect %s has no %s nodes", ErrDialect, recipes.ErrBadArgument, c.Dialect, role)
	}
	return nil
}

// Path returns the lock's path, under which the contenders' nodes are.
func (m *Mutex) Path() string { return m.path }

func (m *Mutex) spec() recipes.Spec {
	return recipes.Spec{
		Path:      m.path,
		Dialect:   m.cfg.Dialect,
		Role:      recipes.RoleLock,
		Predicate: recipes.Exclusive(),
		Data:      m.cfg.Data,
		Policy:    m.cfg.LossPolicy(m.s),
		Revocable: m.cfg.Revocable,
	}
}

// begin refuses a nil receiver or ctx, then marks an acquisition in
// progress.
func (m *Mutex) begin(ctx context.Context) error {
	if m == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.busy || m.h != nil {
		return ErrAlreadyHeld
	}
	m.busy = true
	return nil
}

func (m *Mutex) end(h *recipes.Holding) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.busy = false
	m.h = h
}

// Lock waits until this Mutex holds the lock or ctx is done. If ctx ends
// first, our node is deleted before Lock returns and the error wraps ctx's
// error (errors.Is matches ctx.Err() and the caller's cause, see
// recipes.ContextError); with an already-done ctx nothing is sent.
//
// Cost: uncontended 1 create + 1 getChildren (+1 getData with
// WithRevocation; +1 getACL on an authenticated Session's first Lock on
// the path, which fails with an error wrapping recipes.ErrOpenParent when
// the path lets anyone create or delete children: see
// recipes.WithAllowOpenParents). Contended: 1 getData to watch the node ahead; when it
// goes, a waiter that had two or fewer nodes ahead when it listed checks
// those that remain with 1 getData each (none when it is now first), and
// one that had more lists once again instead (1 getChildren: most of them
// are usually gone by then); docs/bench.md has the measured counts. If
// the session is lost while waiting, Lock starts over under the new
// session.
//
// Lock never returns nil with Context() already done: a suspension (default
// loss policy) or a session change at the moment it acquires is waited out
// or started over (see recipes.Acquire).
//
// A holding that was lost (Context() done) still counts as held by this Mutex
// until Unlock (see Unlock).
func (m *Mutex) Lock(ctx context.Context) error {
	if err := m.begin(ctx); err != nil {
		return err
	}
	h, err := recipes.Acquire(ctx, m.s, m.spec())
	m.end(h)
	if err != nil {
		return fmt.Errorf("lock: lock %s: %w", m.path, err)
	}
	return nil
}

// TryLock takes the lock only if nobody holds or waits for it. It returns
// ErrLocked when someone does; in that case it writes nothing (cost: 1
// getChildren). Uncontended cost: 1 getChildren + 1 create + 1 getChildren.
// If a contender slipped in between, our node is deleted and the result is
// ErrLocked.
func (m *Mutex) TryLock(ctx context.Context) error {
	if err := m.begin(ctx); err != nil {
		return err
	}
	h, err := recipes.TryAcquire(ctx, m.s, m.spec())
	m.end(h)
	if errors.Is(err, recipes.ErrWouldBlock) {
		return fmt.Errorf("%w: %s", ErrLocked, m.path)
	}
	if err != nil {
		return fmt.Errorf("lock: trylock %s: %w", m.path, err)
	}
	return nil
}

// Unlock releases the lock: Context() is cancelled (cause recipes.ErrReleased),
// then our node is deleted, which wakes exactly the one waiter watching it.
// Cost: 1 delete; an ambiguous delete (or a done ctx) is retried in the
// background while the session lives. Unlock waits for the delete's answer
// only while ctx lasts: when ctx ends first it returns and the delete goes
// on in the background (see recipes.Holding.Release).
//
// It returns nil when it released a live holding; otherwise, as every
// Release does (see recipes.Held), an error that errors.Is
// recipes.ErrReleased. Without a holding (never locked, or unlocked
// before) that is ErrNotHeld, and nothing is sent. After the holding was
// lost (Context() done) the error also wraps the loss's cause; the holding
// is given up all the same: the delete is sent only while our node may
// still be there (the session lives and nobody else deleted it).
func (m *Mutex) Unlock(ctx context.Context) error {
	if m == nil {
		return ErrNilReceiver
	}
	if ctx == nil {
		return recipes.ErrNilContext
	}
	m.mu.Lock()
	h := m.h
	m.h = nil
	m.mu.Unlock()
	if h == nil {
		return ErrNotHeld
	}
	if err := h.Release(ctx); err != nil {
		return fmt.Errorf("lock: unlock %s: %w", m.path, err)
	}
	return nil
}

func (m *Mutex) holding() *recipes.Holding {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.h
}

// Context returns the holding's lifetime context: it is cancelled, with a
// cause that errors.Is recipes.ErrSuspended (default loss policy; also
// recipes.ErrLeaseExpired), recipes.ErrSessionLost, recipes.ErrNodeDeleted,
// recipes.ErrRevoked or recipes.ErrReleased, the moment the holding may be
// lost (see recipes.Held). Without a holding it returns a context already
// cancelled with ErrNotHeld. The first call per holding arms a data watch
// on our node (1 getData, in the background) unless one is set.
func (m *Mutex) Context() context.Context {
	if h := m.holding(); h != nil {
		return h.Context()
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrNotHeld)
	return ctx
}

// Revoked returns a channel closed when another process asked this holder
// to release (see Revoke). Only watched with WithRevocation; nil (never
// ready) without a holding.
func (m *Mutex) Revoked() <-chan struct{} {
	if h := m.holding(); h != nil {
		return h.Revoked()
	}
	return nil
}

// Fence returns the holding's fencing token (the zero Fence without one).
func (m *Mutex) Fence() recipes.Fence {
	if h := m.holding(); h != nil {
		return h.Fence()
	}
	return recipes.Fence{}
}

// Node returns the full path of our node while holding, else "".
func (m *Mutex) Node() string {
	if h := m.holding(); h != nil {
		return h.Path()
	}
	return ""
}

// FencedMulti runs ops in one multi together with a version check of our
// node, so ZooKeeper rejects them (error wrapping recipes.ErrFenced) once the
// holding is gone. Cost: 1 multi. Without a holding it returns ErrNotHeld.
func (m *Mutex) FencedMulti(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	if m == nil {
		return nil, ErrNilReceiver
	}
	if ctx == nil {
		return nil, recipes.ErrNilContext
	}
	h := m.holding()
	if h == nil {
		return nil, ErrNotHeld
	}
	res, err := recipes.FencedMulti(ctx, m.s, h.Fence(), ops...)
	if err != nil {
		return res, fmt.Errorf("lock: %w", err)
	}
	return res, nil
}

// Participant is one contender of a lock, in queue order (the first
// holds), or one permit of a semaphore (see Semaphore.Participants).
type Participant struct {
	Node      string // full path of the contender's node
	Data      []byte // its data (Curator and this package: an identity)
	SessionID int64  // its ephemeral owner
}

// Participants lists the lock's contenders in queue order (the holder
// first) with their data. Cost: 1 getChildren + 1 getData per contender;
// contenders that leave meanwhile are skipped.
func (m *Mutex) Participants(ctx context.Context) ([]Participant, error) {
	if m == nil {
		return nil, ErrNilReceiver
	}
	return participants(ctx, m.s, m.cfg.Dialect, m.path, m.cfg.Dialect.Blocking(recipes.RoleLock))
}

func participants(ctx context.Context, s *recipes.Session, d recipes.Dialect, path string, roles []recipes.Role) ([]Participant, error) {
	cs, err := recipes.Contenders(ctx, s, d, path, roles...)
	if err != nil {
		return nil, fmt.Errorf("lock: participants %s: %w", path, err)
	}
	out := make([]Participant, 0, len(cs))
	for _, c := range cs {
		if err := recipes.ContextError(ctx); err != nil {
			return nil, err
		}
		p := zkpath.Join(path, c.Name)
		data, st, err := s.Conn().Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lock: participants %s: %w", path, recipes.Answer(err))
		}
		out = append(out, Participant{Node: p, Data: data, SessionID: st.EphemeralOwner})
	}
	return out, nil
}
