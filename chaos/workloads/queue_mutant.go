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

// QueueByPath is the queue by-path mutant and its twin: the queue workload
// (see Queue) with one producer, ten bystander consumers that hold each
// claim for two session timeouts before they ack it, and a target consumer
// (c1) that hands every item it claims back after a quarter of a session
// timeout (Claim.Release), so that the head item keeps changing hands.
//
// The bystanders start one after another, a fifth of a session timeout
// apart, and the producer keeps pace with them: one of them acks and claims
// the head item every fifth of a session timeout. A half-open window (at
// least half a session timeout) struck while the target holds therefore
// always sees a bystander claim the item whose release the target sent
// unanswered, and that bystander still holds it when the target's retry
// comes after the heal (within the window, at most a session timeout, plus
// go-zookeeper's reconnection: less than the two session timeouts it holds).
// With bystanders that held for one session timeout and claimed all at
// once, the scenario missed the mutant on one seed in three: the one
// bystander that claimed in the window had acked before the target's retry
// (go-zookeeper waits a second before it reconnects once every server
// failed it).
//
// The twin's target releases with queue's Release: a delete whose outcome
// is unknown continues in the background and deletes the claim node only
// while it is still its own (recipes' guaranteed delete checks the owner).
// With Mutant set, the target deletes its claim node by path (version -1)
// and retries that delete after a connection error, without looking at the
// owner: under half-open its first delete is applied unseen, a bystander
// claims the item, and the retry after the heal deletes the bystander's
// claim; the item is then claimed again while the bystander still holds it,
// and queue-delivery catches two live claims. Without a fault no delete is
// ambiguous and the mutant is correct.
type QueueByPath struct {
	Mutant bool
}

// Name is "queue-bypath-mutant", or "queue-bypath" for the twin.
func (w *QueueByPath) Name() string { return mutantName("queue-bypath", w.Mutant) }

// Checkers: queue-delivery, liveness, no-nodes-left.
func (w *QueueByPath) Checkers(cfg CheckConfig) []checkers.Checker {
	return []checkers.Checker{checkers.QueueDelivery(), checkers.Liveness(cfg.LivenessBound), checkers.NoNodesLeft()}
}

// Run runs the target consumer (c1), the producer (c2, also under the
// fault: the runner waits for the registered clients to progress after a
// heal) and the bystander consumers (c3, c4, ...) until ctx is done, drains the queue and audits it as
// Queue does.
func (w *QueueByPath) Run(ctx context.Context, env *cluster.Env) error {
	path := env.Root + "/queue"
	cs, closeLinks, err := mutantClients(env, 12, 2)
	if err != nil {
		return err
	}
	defer closeLinks()
	var (
		all  sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	produced := make(chan struct{})
	q := &Queue{}
	// The bystanders ack one item per two session timeouts each, one
	// every pace in turn: the producer puts one item per bystander at
	// once, then keeps pace with them, so that the target finds items to
	// hand back and the queue stays short (a bystander then soon takes the
	// item the target hands back).
	acks := len(cs) - 2
	hold := 2 * env.SessionTimeout
	pace := hold / time.Duration(acks)
	for i, c := range cs {
		all.Add(1)
		go func() {
			defer all.Done()
			switch i {
			case 1:
				defer close(produced)
				fail(w.producer(ctx, env, c, path, acks, pace))
			case 0:
				fail(w.consumer(ctx, env, c, path, produced, 0, env.SessionTimeout/4, true))
			default:
				fail(w.consumer(ctx, env, c, path, produced, time.Duration(i-2)*pace, hold, false))
			}
		}()
	}
	all.Wait()
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*env.SessionTimeout+10*time.Second)
	defer cancel()
	fail(q.audit(actx, env, path))
	return errors.Join(errs...)
}

// producer puts burst items at once, then one per pace, until ctx is done;
// as Queue's producer does, it records each put.
func (w *QueueByPath) producer(ctx context.Context, env *cluster.Env, c *cluster.Client, path string, burst int, pace time.Duration) error {
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
			op.Unknown(err.Error())
		} else {
			op.OK(seq)
		}
		if seq >= int64(burst) && !cluster.Sleep(ctx, pace) {
			break
		}
	}
	return nil
}

// consumer claims items, the first after delay, until ctx is done, then
// drains (as Queue's consumer does); it holds each claim for hold, then
// acks it, or with giveBack releases it.
func (w *QueueByPath) consumer(ctx context.Context, env *cluster.Env, c *cluster.Client, path string, produced <-chan struct{}, delay, hold time.Duration, giveBack bool) error {
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
	var watchers sync.WaitGroup
	defer watchers.Wait()
	defer closeRecipes(s, st)
	q, err := queue.New(s, path)
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", c.Log.Name(), err)
	}
	cluster.Sleep(ctx, delay) // done early: drain what is left
	for drain.Err() == nil {
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
					return nil
				default:
				}
			}
			cluster.Sleep(drain, 20*time.Millisecond)
			continue
		}
		item := cl.Item().Name
		data := string(cl.Item().Data)
		op.OKKey(data, 0)
		c.Log.Acquired(data, 0, "claim")
		claimCtx := cl.Context()
		forget := make(chan struct{})   // closed when the mutant drops the claim by hand
		recorded := make(chan struct{}) // closed once the watcher is done
		watchers.Add(1)
		go func() {
			defer watchers.Done()
			defer close(recorded)
			select {
			case <-claimCtx.Done():
			case <-forget:
				return
			}
			if cause := context.Cause(claimCtx); !errors.Is(cause, recipes.ErrReleased) {
				c.Log.Lost(data, 0, fmt.Sprint(cause))
			}
		}()
		holdFor(drain, claimCtx, hold)
		if claimCtx.Err() != nil {
			// The hold ended because the claim did: its loss is recorded
			// before what the consumer does next (an ack invoked after a
			// loss it did not see recorded would look like the owner's
			// own delete, and hide a claim another client deleted).
			<-recorded
		}
		if giveBack {
			if claimCtx.Err() == nil {
				c.Log.Released(data, 0)
			}
			if w.Mutant {
				// The mutant: by path, whoever owns the node now, again
				// after each connection error (as long as the session
				// lives, as a guaranteed delete does).
				// The Claim is left as it is (its Release would send a
				// delete of its own); its context ends with the session.
				close(forget)
				deleteByPath(drain, s, path+"/taken/"+item)
			} else {
				rctx, rcancel := context.WithTimeout(drain, st)
				_ = cl.Release(rctx)
				rcancel()
			}
			cluster.Sleep(drain, 5*time.Millisecond)
			continue
		}
		ack := c.Log.Invoke(history.FnAck, data, 0)
		actx, acancel := context.WithTimeout(drain, st)
		err = cl.Ack(actx)
		acancel()
		switch {
		case err == nil:
			ack.OK(0)
			c.Log.Released(data, 0)
		case errors.Is(err, queue.ErrClaimLost):
			ack.Fail(err.Error())
		default:
			ack.Unknown(err.Error())
			rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), st)
			if cl.Release(rctx) == nil {
				c.Log.Released(data, 0)
			}
			rcancel()
		}
	}
	return nil
}

// deleteByPath deletes p with version -1, again after every connection
// error, until it is gone, the session is lost or ctx is done: the delete
// the rules forbid for a node whose path is not unique to us.
func deleteByPath(ctx context.Context, s *recipes.Session, p string) {
	sid := s.ID()
	for {
		id, err := s.WaitUsable(ctx)
		if err != nil || id != sid {
			return
		}
		err = s.Conn().Delete(p, -1)
		if err == nil || !recipes.IsConnErr(err) || !cluster.Sleep(ctx, 50*time.Millisecond) {
			return
		}
	}
}
