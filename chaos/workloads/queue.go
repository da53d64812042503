package workloads

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Queue is the workload of queue.Queue with claim-and-ack consumption:
// the first clients (a third of them, at least one) are producers, the
// others consumers, each with its own recipes.Session on its own link.
// A producer puts items named "<client>-<seq>" (the item's data) with
// growing sequence numbers; a consumer loops Claim, then Ack. Puts are
// recorded as put operations (Key = item, Arg = sequence), each Claim as a
// take (ok Key = the item it returned) and each Ack as an ack. A put or an
// ack whose outcome the client could not learn is unknown; a failed Claim
// took nothing the checkers count. Each claim is also recorded as a holding
// of the item (mode "claim"): acquired when Claim returns, released when
// the ack (or, after an ack of unknown outcome, the release) returns, lost
// when the claim's context says it may be gone.
//
// When ctx is done the producers stop and the consumers drain the queue
// (until a Claim finds nothing for a session timeout once every producer
// stopped, at most a few session timeouts), so that every acknowledged put
// must have been taken.
//
// Checked by: every acknowledged put and every claimed item is acked
// (consumed), no two claims of an item are live at once, nothing is taken
// again after it was acked or taken without being put, first deliveries
// follow each producer's order; liveness after every heal; no item or claim
// node left once the consumers drained the queue and every session closed.
type Queue struct {
	// Pace is the pause between two puts of a producer. Default 20 ms.
	Pace time.Duration
}

// Name is "queue".
func (w *Queue) Name() string { return "queue" }

// Checkers: queue-delivery, liveness, no-nodes-left.
func (w *Queue) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.QueueDelivery(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run makes <root>/queue and runs the producers and consumers until ctx is
// done, then drains the queue.
func (w *Queue) Run(ctx context.Context, env *cluster.Env) error {
	pace := w.Pace
	if pace == 0 {
		pace = 20 * time.Millisecond
	}
	path := env.Root + "/queue"
	producers := max(1, env.Clients/3)
	var (
		prodWG, all sync.WaitGroup
		mu          sync.Mutex
		errs        []error
	)
	produced := make(chan struct{})
	fail := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("c%d", i+1))
		if err != nil {
			fail(err)
			break
		}
		producer := i < producers
		consumer := !producer || env.Clients == 1 // a lone client does both
		if producer {
			prodWG.Add(1)
			all.Add(1)
			go func() {
				defer all.Done()
				defer prodWG.Done()
				fail(w.producer(ctx, env, c, path, pace))
			}()
		}
		if consumer {
			all.Add(1)
			go func() {
				defer all.Done()
				fail(w.consumer(ctx, env, c, path, produced))
			}()
		}
	}
	go func() { prodWG.Wait(); close(produced) }()
	all.Wait()
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*env.SessionTimeout+10*time.Second)
	defer cancel()
	fail(w.audit(actx, env, path))
	return errors.Join(errs...)
}

// audit records as litter the items and claim nodes left once the
// consumers drained the queue and every session closed.
func (w *Queue) audit(ctx context.Context, env *cluster.Env, path string) error {
	a, err := newAuditor(ctx, env)
	if err != nil {
		return err
	}
	defer a.close()
	kids, err := a.children(ctx, path)
	var items []string
	for _, k := range kids {
		if k != "taken" {
			items = append(items, k)
		}
	}
	a.litter("items left in "+path+" after the drain", items, err)
	claims, err := a.children(ctx, path+"/taken")
	a.litter("claims left under "+path+"/taken", claims, err)
	return nil
}

func (w *Queue) producer(ctx context.Context, env *cluster.Env, c *cluster.Client, path string, pace time.Duration) error {
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	defer closeRecipes(s, env.SessionTimeout)
	q, err := queue.New(s, path)
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", c.Log.Name(), err)
	}
	for seq := int64(1); ctx.Err() == nil; seq++ {
		item := fmt.Sprintf("%s-%06d", c.Name, seq)
		op := c.Log.Invoke(history.FnPut, item, seq)
		if _, err := q.Put(ctx, []byte(item)); err != nil {
			op.Unknown(err.Error()) // uncertain, or not sent: either way it may be there or not
		} else {
			op.OK(seq)
		}
		if !cluster.Sleep(ctx, pace) {
			break
		}
	}
	return nil
}

// consumer claims and acks items until ctx is done, then drains: it goes on
// until every producer stopped and a Claim found nothing for a session
// timeout, or the drain's deadline passed.
func (w *Queue) consumer(ctx context.Context, env *cluster.Env, c *cluster.Client, path string, produced <-chan struct{}) error {
	st := env.SessionTimeout
	drain, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		<-ctx.Done()
		select {
		case <-time.After(4*st + 10*time.Second):
			cancel()
		case <-drain.Done():
		}
	}()
	s, err := connectRecipes(ctx, env, c)
	if s == nil {
		return err
	}
	var watchers sync.WaitGroup // each ends with its claim's context, at the latest when the session closes
	defer watchers.Wait()
	defer closeRecipes(s, st)
	q, err := queue.New(s, path)
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", c.Log.Name(), err)
	}
	for drain.Err() == nil {
		// Before ctx ends, a Claim waits as long as ctx; then each waits at
		// most a session timeout.
		cctx, ccancel := ctx, context.CancelFunc(func() {})
		draining := ctx.Err() != nil
		if draining {
			cctx, ccancel = context.WithTimeout(drain, st)
		}
		op := c.Log.Invoke(history.FnTake, "", 0)
		cl, err := q.Claim(cctx)
		ccancel()
		if err != nil {
			op.Fail(err.Error())
			if draining && drain.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				select {
				case <-produced:
					return nil // every producer stopped and nothing came for a session timeout
				default:
				}
			}
			cluster.Sleep(drain, 20*time.Millisecond)
			continue
		}
		item := string(cl.Item().Data)
		op.OKKey(item, 0)
		// The claim is live from here until the ack or release returns, or
		// until its context says it may be lost.
		c.Log.Acquired(item, 0, "claim")
		claimCtx := cl.Context()
		watchers.Add(1)
		go func() {
			defer watchers.Done()
			<-claimCtx.Done()
			if cause := context.Cause(claimCtx); !errors.Is(cause, recipes.ErrReleased) {
				c.Log.Lost(item, 0, fmt.Sprint(cause))
			}
		}()
		cluster.Sleep(drain, 2*time.Millisecond) // process it
		ack := c.Log.Invoke(history.FnAck, item, 0)
		actx, acancel := context.WithTimeout(drain, st)
		err = cl.Ack(actx)
		acancel()
		switch {
		case err == nil:
			ack.OK(0)
			c.Log.Released(item, 0)
		case errors.Is(err, queue.ErrClaimLost):
			ack.Fail(err.Error()) // the claim's context records the loss
		default:
			ack.Unknown(err.Error())
			rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), st)
			if cl.Release(rctx) == nil { // best effort: the session's end drops the claim anyway
				c.Log.Released(item, 0)
			}
			rcancel()
		}
	}
	return nil
}
