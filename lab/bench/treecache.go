package bench

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
)

// treeNodes is how many nodes the tree cache workload's tree has: a root,
// fanout children, and fanout children of each.
func treeNodes(fanout int) int { return 1 + fanout + fanout*fanout }

// treecache measures a tree cache kept true while the harness's own session
// (straight to the servers, never counted) sets the data of the leaves of
// a tree built before the cache starts (see buildTree, writeLeaves). The
// counts are client 0's alone, the cache's: requests per change written
// (treecache-changes) and per update event delivered (treecache-events).
// Both figures are over the same span, from the first write until the
// cache had delivered the last leaf's final value: changes written per
// second, and update events delivered per second (fewer when the cache
// coalesced changes). The level fails unless the cache delivered the whole
// tree before its initialized event, then showed the final value of every
// leaf within TreeCatchUp of the last write, with no event other than
// updates and no more updates than changes.
func (h *harness) treecache(ctx context.Context, impl string, drv Driver, c *zkcount.Counter) bool {
	chg := Result{Workload: "treecache-changes", Impl: impl, Unit: "changes/s", Floor: floorTreeCache}
	ev := Result{Workload: "treecache-events", Impl: impl, Unit: "events/s", Floor: floorTreeCache}
	err := h.treeRun(ctx, impl, drv, c, &chg, &ev)
	if err != nil {
		chg.Err, ev.Err = errText(err), errText(err)
	}
	h.add(chg)
	h.add(ev)
	return err != nil && !errors.Is(err, ErrUnsupported)
}

func (h *harness) treeRun(ctx context.Context, impl string, drv Driver, c *zkcount.Counter, chg, ev *Result) error {
	root := h.path(impl, "treecache")
	leaves, err := h.buildTree(root, h.cfg.TreeFanout)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	nodes, err := drv.WatchTree(wctx, root)
	cancel()
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		_ = drv.UnwatchTree(uctx)
		cancel()
	}()
	if err != nil {
		return err
	}
	if want := treeNodes(h.cfg.TreeFanout); nodes != want {
		return fmt.Errorf("the cache delivered %d nodes before its initialized event, want %d", nodes, want)
	}
	settle(ctx, c)
	before := c.Snapshot()
	t0 := Now()
	changes, final, err := h.writeLeaves(ctx, leaves, h.cfg.Duration, h.cfg.TreeWriters)
	t1 := Now()
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, h.cfg.TreeCatchUp)
	got, err := drv.AwaitTree(actx, final)
	cancel()
	if err != nil {
		return fmt.Errorf("the cache did not show every leaf's final value within %s of the last write: %w", h.cfg.TreeCatchUp, err)
	}
	settle(ctx, c)
	d := c.Snapshot().Sub(before)
	span := time.Duration(got.At - t0)
	switch {
	case got.Others != 0:
		return fmt.Errorf("the cache delivered %d events other than updates while only data changed", got.Others)
	case got.Updates > changes:
		return fmt.Errorf("the cache delivered %d update events for %d changes", got.Updates, changes)
	case got.Updates == 0 || changes == 0 || span <= 0:
		return fmt.Errorf("nothing measured: %d changes, %d update events over %s", changes, got.Updates, span)
	}
	chg.Value, chg.Ops, chg.Cost = float64(changes)/span.Seconds(), changes, cost(d, changes)
	ev.Value, ev.Ops, ev.Cost = float64(got.Updates)/span.Seconds(), got.Updates, cost(d, got.Updates)
	written := time.Duration(t1 - t0)
	// The cache may show the last value before the reply to its set
	// reaches the writer.
	lag := time.Duration(got.At - t1).Round(time.Millisecond)
	shown := fmt.Sprintf("%s after the last write's reply", lag)
	if lag < 0 {
		shown = fmt.Sprintf("%s before the last write's reply reached the writer", -lag)
	}
	note := fmt.Sprintf("treecache %s: %d changes written in %s (%s changes/s, %d sets in flight), %d update events "+
		"delivered (%d changes coalesced), %d requests and %d notifications to the cache's client; the last final "+
		"value was shown %s",
		impl, changes, written.Round(time.Millisecond), fmtNum(float64(changes)/written.Seconds()), h.cfg.TreeWriters,
		got.Updates, changes-got.Updates, d.Total(), d.Notifications, shown)
	h.rep.Notes = append(h.rep.Notes, note)
	fmt.Fprintf(h.cfg.Progress, "%s\n", note)
	return nil
}

// buildTree creates, from the harness's session and in one multi, the tree
// cache workload's tree at root: the root, its children c0, c1, ... and
// theirs l0, l1, ... (the leaves), every node with data "0". It returns the
// leaves' paths, sorted.
func (h *harness) buildTree(root string, fanout int) ([]string, error) {
	if err := h.ensure(path.Dir(root)); err != nil {
		return nil, err
	}
	acl := zk.WorldACL(zk.PermAll)
	zero := []byte("0")
	ops := []any{&zk.CreateRequest{Path: root, Data: zero, Acl: acl}}
	var leaves []string
	for i := range fanout {
		p := fmt.Sprintf("%s/c%d", root, i)
		ops = append(ops, &zk.CreateRequest{Path: p, Data: zero, Acl: acl})
		for j := range fanout {
			leaf := fmt.Sprintf("%s/l%d", p, j)
			ops = append(ops, &zk.CreateRequest{Path: leaf, Data: zero, Acl: acl})
			leaves = append(leaves, leaf)
		}
	}
	if _, err := h.admin.Multi(ops...); err != nil {
		return nil, fmt.Errorf("bench: create the tree at %s: %w", root, err)
	}
	slices.Sort(leaves)
	return leaves, nil
}

// writeLeaves sets the data of leaves until d has passed, from the
// harness's own session (never counted), pipelined: w writers share the
// session, so that up to w sets are in flight. Writer i owns the leaves
// whose index is i modulo w and sets them in turn, one set at a time, each
// to the decimal count of that leaf's sets so far ("1", "2", ...; the
// leaves start at "0"), so the last value written to each leaf is known.
// It returns the sets done and each leaf's final data.
func (h *harness) writeLeaves(ctx context.Context, leaves []string, d time.Duration, w int) (int, map[string]string, error) {
	w = max(1, min(w, len(leaves)))
	counts := make([]int, len(leaves))
	errs := make([]error, w)
	var sets atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for i := range w {
		wg.Go(func() {
			for k := i; time.Now().Before(deadline); k += w {
				if k >= len(leaves) {
					k = i
				}
				if err := ctx.Err(); err != nil {
					errs[i] = context.Cause(ctx)
					return
				}
				n := counts[k] + 1
				if _, err := h.admin.Set(leaves[k], []byte(strconv.Itoa(n)), -1); err != nil {
					errs[i] = fmt.Errorf("bench: set %s: %w", leaves[k], err)
					return
				}
				counts[k] = n
				sets.Add(1)
			}
		})
	}
	wg.Wait()
	final := make(map[string]string, len(leaves))
	for k, leaf := range leaves {
		final[leaf] = strconv.Itoa(counts[k])
	}
	return int(sets.Load()), final, errors.Join(errs...)
}

// treeWatch is a running tree cache as a driver of this process reads it
// (see Driver.WatchTree): its reader notes each event as it is delivered.
type treeWatch struct {
	stop func()        // ends the cache's stream
	done chan struct{} // closed once the reader has returned
	kick chan struct{} // one pending signal: an event was noted

	mu          sync.Mutex
	seen        map[string]seenData // per path: the last added or updated event
	initialized bool
	nodes       int   // distinct paths delivered before the initialized event
	updates     int   // update events after it
	others      int   // other events after it
	err         error // why the stream ended, once done is closed
}

type seenData struct {
	data string
	at   int64 // Now() when delivered
}

func newTreeWatch(stop func()) *treeWatch {
	return &treeWatch{stop: stop, done: make(chan struct{}), kick: make(chan struct{}, 1), seen: map[string]seenData{}}
}

// note records one delivered event.
func (w *treeWatch) note(e cache.Event) {
	at := Now()
	w.mu.Lock()
	switch e.Type {
	case cache.EventAdded, cache.EventUpdated:
		w.seen[e.Node.Path] = seenData{data: string(e.Node.Data), at: at}
	}
	switch {
	case !w.initialized && e.Type == cache.EventInitialized:
		w.initialized, w.nodes = true, len(w.seen)
	case !w.initialized:
	case e.Type == cache.EventUpdated:
		w.updates++
	default:
		w.others++
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// wait waits until cond holds (checked under w.mu, at once and after each
// event), the stream ends, or ctx does.
func (w *treeWatch) wait(ctx context.Context, cond func() bool) error {
	for {
		w.mu.Lock()
		ok := cond()
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-w.kick:
		case <-w.done:
			w.mu.Lock()
			ok := cond()
			w.mu.Unlock()
			if ok {
				return nil
			}
			return fmt.Errorf("bench: the tree cache stopped: %v", w.err)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

func (w *treeWatch) waitInit(ctx context.Context) (int, error) {
	if err := w.wait(ctx, func() bool { return w.initialized }); err != nil {
		return 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nodes, nil
}

func (w *treeWatch) await(ctx context.Context, want map[string]string) (TreeEvents, error) {
	var out TreeEvents
	err := w.wait(ctx, func() bool {
		out = TreeEvents{Updates: w.updates, Others: w.others}
		for p, data := range want {
			s, ok := w.seen[p]
			if !ok || s.data != data {
				return false
			}
			out.At = max(out.At, s.at)
		}
		return true
	})
	return out, err
}

// end stops the cache and waits for its reader to return.
func (w *treeWatch) end(ctx context.Context) error {
	w.stop()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
