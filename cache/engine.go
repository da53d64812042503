// The engine every cache runs: its state, the goroutine that keeps the
// view true (run, loop, step), how it follows the Session's state
// (suspension, loss, a moved session) and how it ends. The queue of reads
// is in engine_queue.go, applying their answers in engine_apply.go, and the
// view itself in engine_view.go.

package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/zkrecipes/zkrecipes/internal/hooks"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// config is what tells the three caches apart.
type config struct {
	kind     string // "node", "children", "tree": for messages
	rootData bool   // the root is a cached node (else only its children are)
	maxDepth int    // children of nodes at a smaller depth are listed (root: 0)
	filter   func(path string) bool
}

// engine is the machinery every cache runs: a view of a subtree, kept true
// by one goroutine (the Stream's producer) from one WatchSet's events and
// the Session's state changes.
type engine struct {
	s    *recipes.Session
	root string
	cfg  config

	started atomic.Bool

	// The view. Written by the run goroutine only, under mu.
	mu    sync.RWMutex
	nodes map[string]*entry // by path; the root of a children cache is hidden

	// Set by the Session's state hook, read by the run goroutine.
	st   stateIn
	stCh chan struct{} // capacity 1: st changed

	// The run goroutine's own state.
	ws           *recipes.WatchSet
	out          chan<- Event
	sid          int64 // the session the view was last read under
	queue        []*item
	queued       map[itemKey]*item   // the queue's items by key
	touched      map[string]struct{} // paths the batch being applied changed
	listed       map[string]struct{} // nodes whose listing the last batch applied
	initPending  int                 // queued items of the current load
	initializing bool                // a load is under way: EventInitialized ends it
	needLoad     bool                // read everything (after Start, or a session loss)
	needRefresh  bool                // read everything again (after a disconnection)
	settle       bool                // a disconnection was seen: pause before reading again
	resetPending bool                // EventReset to send
	emitted      bool                // an event was sent
}

// stateIn is what the state hook leaves for the run goroutine.
type stateIn struct {
	mu        sync.Mutex
	state     recipes.State
	suspended bool // a disconnection since last taken
	lost      bool // a session loss since last taken
}

func newEngine(s *recipes.Session, root string, cfg config) *engine {
	return &engine{s: s, root: root, cfg: cfg, nodes: make(map[string]*entry), stCh: make(chan struct{}, 1)}
}

// errStop: ctx ended while sending an event.
var errStop = errors.New("cache: stopped")

// nilCache is Watch on a nil cache: a Stream that ends with an error
// wrapping recipes.ErrBadArgument, having sent nothing.
func nilCache(ctx context.Context) *recipes.Stream[Event] {
	return recipes.StartStream(ctx, func(context.Context, chan<- Event) error {
		return fmt.Errorf("cache: %w: nil cache", recipes.ErrBadArgument)
	})
}

// start runs the cache on its Stream.
func (e *engine) start(ctx context.Context) *recipes.Stream[Event] {
	if ctx != nil && !e.started.CompareAndSwap(false, true) {
		return recipes.StartStream(ctx, func(context.Context, chan<- Event) error {
			return fmt.Errorf("%w: %s cache of %s", ErrStarted, e.cfg.kind, e.root)
		})
	}
	return recipes.StartStream(ctx, e.run)
}

func (e *engine) run(ctx context.Context, out chan<- Event) error {
	if ctx.Err() != nil {
		return nil // a done ctx sends nothing
	}
	ws, err := e.s.NewWatchSet()
	if err != nil {
		return fmt.Errorf("cache %s: %w", e.root, err)
	}
	defer ws.Close()
	state, _, remove := e.s.OnStateChange(e.onState)
	defer remove()
	e.st.mu.Lock()
	e.st.state = state
	e.st.mu.Unlock()
	e.ws, e.out = ws, out
	e.queued = make(map[itemKey]*item)
	e.needLoad = true
	if err := e.loop(ctx); !errors.Is(err, errStop) {
		return err
	}
	return nil // ctx ended: StartStream reports it
}

// onState is the Session's state hook: it runs on the connection's
// goroutine and only records the change.
func (e *engine) onState(c recipes.StateChange) {
	e.st.mu.Lock()
	e.st.state = c.State
	switch c.State {
	case recipes.StateSuspended:
		e.st.suspended = true
	case recipes.StateLost:
		e.st.lost = true
	}
	e.st.mu.Unlock()
	select {
	case e.stCh <- struct{}{}:
	default:
	}
}

// takeState returns the current state and whether a disconnection or a
// session loss happened since the last call.
func (e *engine) takeState() (state recipes.State, suspended, lost bool) {
	e.st.mu.Lock()
	defer e.st.mu.Unlock()
	state, suspended, lost = e.st.state, e.st.suspended, e.st.lost
	e.st.suspended, e.st.lost = false, false
	return state, suspended, lost
}

func (e *engine) loop(ctx context.Context) error {
	for {
		if ctx.Err() != nil {
			return errStop
		}
		e.takeEvents(e.ws.Events())
		e.listed = nil
		state, suspended, lost := e.takeState()
		if state == recipes.StateClosed {
			return fmt.Errorf("cache %s: %w", e.root, recipes.ErrClosed)
		}
		if suspended {
			e.needRefresh, e.settle = true, true
		}
		if lost {
			e.needLoad = true
			e.resetPending = e.resetPending || e.emitted
		}
		if e.resetPending {
			e.resetPending = false
			if err := e.emit(ctx, Event{Type: EventReset}); err != nil {
				return err
			}
		}
		if state == recipes.StateConnected || state == recipes.StateReconnected {
			busy, err := e.step(ctx)
			if err != nil {
				return err
			}
			if busy {
				continue
			}
		}
		select {
		case <-e.ws.Ready():
		case <-e.stCh:
		case <-ctx.Done():
			return errStop
		}
	}
}

// step does one thing on a usable session: start a load or a refresh, or
// a batch of queued reads. It reports whether there may be more to do at
// once.
func (e *engine) step(ctx context.Context) (bool, error) {
	if e.settle {
		// Back after a disconnection: go-zookeeper sets its watches again
		// on the new connection concurrently with new requests (and takes
		// the zxid to compare with from whichever answers came first). Let
		// it go first: a pause, or until the next state change.
		e.settle = false
		if err := e.s.Pause(ctx); err != nil {
			return false, e.failed(ctx, err)
		}
		return true, nil
	}
	switch {
	case e.needLoad:
		return true, e.load(ctx)
	case e.needRefresh:
		e.needRefresh = false
		if !hooks.CacheSkipReread() {
			e.enqueueAll(load(e.initializing))
		}
		return true, nil
	}
	batch := e.popBatch()
	if len(batch) == 0 {
		return false, nil
	}
	if err := e.process(ctx, batch); err != nil {
		return false, err
	}
	if e.initializing && e.initPending == 0 && !e.needLoad && !e.needRefresh {
		e.initializing = false
		if err := e.emit(ctx, Event{Type: EventInitialized}); err != nil {
			return false, err
		}
	}
	return true, nil
}

// load starts reading the whole subtree: after Watch, and after a session
// loss. A new session may be served by a server that is behind the one
// that served the view so far (a local session: see Never back in the
// package doc); a sync makes it catch up first, so nothing read after it
// is older than what the view holds.
func (e *engine) load(ctx context.Context) error {
	sid := e.s.ID()
	if e.sid != 0 && sid != e.sid {
		if err := e.sync(ctx); err != nil {
			return e.failed(ctx, err)
		}
		if e.s.ID() != sid {
			return nil // replaced again meanwhile: load again
		}
	}
	e.sid = sid
	e.needLoad, e.needRefresh = false, false
	e.initializing = true
	e.enqueueAll(inLoad)
	return nil
}

// sync asks the server to catch up with the ensemble's leader before the
// reads that follow (1 sync). Nothing is sent when ctx is done.
func (e *engine) sync(ctx context.Context) error {
	if err := recipes.ContextError(ctx); err != nil {
		return err
	}
	_, err := e.s.Conn().Sync(e.root)
	return err
}

// failed handles the error of a read: nil when the engine goes on (the
// read is dropped: a connection error means everything is read again once
// the session is usable, a session change means a new load), the error
// that ends the stream otherwise.
func (e *engine) failed(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return errStop
	case errors.Is(err, recipes.ErrClosed):
		return fmt.Errorf("cache %s: %w", e.root, err)
	case recipes.IsConnErr(err):
		e.needRefresh = true
		if err := e.s.Pause(ctx); err != nil {
			if ctx.Err() != nil {
				return errStop
			}
			return fmt.Errorf("cache %s: %w", e.root, err)
		}
		return nil
	}
	return fmt.Errorf("cache %s: %w", e.root, err)
}

// moved reports whether the session changed since the view was read: the
// answer just received may come from a server behind the view, so it is
// dropped and everything is read again.
func (e *engine) moved() bool {
	if e.s.ID() == e.sid {
		return false
	}
	e.needLoad = true
	return true
}
