package bench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// participant is one election participant of the leader workload: its own
// testenv link (so that its session alone can be expired), its own counting
// proxy in front of that link, and its own driver (a peer process for
// Curator and kazoo).
type participant struct {
	link  *testenv.Link
	proxy *Proxy
	drv   Driver
}

var linkSeq atomic.Int64

func (h *harness) newParticipant(ctx context.Context, impl string, factory DriverFactory) (*participant, error) {
	link, err := h.e.NewLink(fmt.Sprintf("bench-%s-%d", impl, linkSeq.Add(1)))
	if err != nil {
		return nil, err
	}
	proxy, err := NewProxy(link.Addrs(), zkcount.New())
	if err != nil {
		_ = link.Close()
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	drv, err := factory(sctx, proxy.ConnectString(), h.cfg.SessionTimeout)
	if err != nil {
		_ = proxy.Close()
		_ = link.Close()
		return nil, err
	}
	return &participant{link: link, proxy: proxy, drv: drv}, nil
}

func (p *participant) counter() *zkcount.Counter { return p.proxy.Counter() }

func (p *participant) close(ctx context.Context) {
	if p == nil {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_ = p.drv.Close(cctx)
	_ = p.proxy.Close()
	_ = p.link.Close()
}

// waitQueued waits until the election path has n participants' nodes and
// the newest participant's requests (its watch) are done.
func (h *harness) waitQueued(ctx context.Context, p string, n int, c *zkcount.Counter) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		children, _, err := h.admin.Children(p)
		if err == nil && len(children) == n {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: %d participants never queued on %s (have %d, %v)", n, p, len(children), err)
		case <-t.C:
		}
	}
	settle(ctx, c)
	return nil
}

// leaderNode returns the child of p owned by session sid.
func (h *harness) leaderNode(p string, sid int64) (string, error) {
	children, _, err := h.admin.Children(p)
	if err != nil {
		return "", err
	}
	for _, c := range children {
		_, st, err := h.admin.Exists(p + "/" + c)
		if err == nil && st != nil && st.EphemeralOwner == sid {
			return p + "/" + c, nil
		}
	}
	return "", fmt.Errorf("bench: no node of session 0x%x under %s", sid, p)
}

func sum(a, b zkcount.Counts) zkcount.Counts {
	out := zkcount.Counts{Requests: map[zkcount.Op]int64{}, Notifications: a.Notifications + b.Notifications,
		BytesOut: a.BytesOut + b.BytesOut, BytesIn: a.BytesIn + b.BytesIn}
	for o, v := range a.Requests {
		out.Requests[o] += v
	}
	for o, v := range b.Requests {
		out.Requests[o] += v
	}
	return out
}

func median(xs []time.Duration) time.Duration { return Percentile(xs, 50) }

// runLeader measures leader handoffs between two participants: graceful
// (from the leader's resign call to the next participant leading; requests
// of both, notifications of the one taking over) and after the leader's
// session is lost (from the server deleting the leader's node, seen by the
// harness's own watch, to the next participant leading; requests and
// notifications of the one taking over). After each handoff the old leader
// joins again (graceful) or is replaced by a new participant (expiry), so
// there is always exactly one participant in line.
func (h *harness) runLeader(ctx context.Context, impl string, factory DriverFactory) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	p := h.path(impl, "leader")
	var lead, next *participant
	defer func() {
		lead.close(ctx)
		next.close(ctx)
	}()
	err := h.ensure(p)
	if err == nil {
		lead, err = h.newParticipant(ctx, impl, factory)
	}
	if err == nil {
		err = lead.drv.ElectStart(ctx, p)
	}
	if err == nil {
		_, err = lead.drv.WaitLeader(ctx, 0)
	}
	if err == nil {
		next, err = h.newParticipant(ctx, impl, factory)
	}
	if err == nil {
		err = next.drv.ElectStart(ctx, p)
	}
	if err == nil {
		err = h.waitQueued(ctx, p, 2, next.counter())
	}
	if err != nil {
		h.fail(impl, WLeader, err)
		return
	}

	resign := Result{Workload: "leader-resign", Impl: impl, Unit: "ms", Lower: true, Floor: floorResign}
	var times []time.Duration
	total := zkcount.Counts{Requests: map[zkcount.Op]int64{}}
	for range h.cfg.ResignRounds {
		settle(ctx, lead.counter(), next.counter())
		bl, bn := lead.counter().Snapshot(), next.counter().Snapshot()
		var t0, t1 int64
		t0, err = lead.drv.Resign(ctx)
		if err == nil {
			t1, err = next.drv.WaitLeader(ctx, t0)
		}
		if err != nil {
			break
		}
		times = append(times, time.Duration(t1-t0))
		settle(ctx, lead.counter(), next.counter())
		dl, dn := lead.counter().Snapshot().Sub(bl), next.counter().Snapshot().Sub(bn)
		d := sum(dl, dn)
		d.Notifications = dn.Notifications // wakes: the participant taking over
		total = sum(total, d)
		if err = lead.drv.ElectStart(ctx, p); err == nil {
			err = h.waitQueued(ctx, p, 2, lead.counter())
		}
		if err != nil {
			break
		}
		lead, next = next, lead
	}
	if err != nil {
		resign.Err = errText(err)
	} else {
		resign.Value, resign.Ops, resign.Cost = ms(median(times)), len(times), cost(total, len(times))
	}
	h.add(resign)
	if err != nil {
		h.add(Result{Workload: "leader-expiry", Impl: impl, Err: "not run: graceful handoff failed"})
		return
	}

	expiry := Result{Workload: "leader-expiry", Impl: impl, Unit: "ms", Lower: true, Floor: floorExpiry}
	times = nil
	total = zkcount.Counts{Requests: map[zkcount.Op]int64{}}
	for range h.cfg.ExpiryRounds {
		var took time.Duration
		var d zkcount.Counts
		took, d, err = h.expireLeader(ctx, p, lead, next)
		if err != nil {
			break
		}
		times = append(times, took)
		total = sum(total, d)
		// The old leader is gone for good: a new participant queues.
		lead.close(ctx)
		lead = nil
		var fresh *participant
		fresh, err = h.newParticipant(ctx, impl, factory)
		if err == nil {
			lead, next = next, fresh
			if err = next.drv.ElectStart(ctx, p); err == nil {
				err = h.waitQueued(ctx, p, 2, next.counter())
			}
		}
		if err != nil {
			break
		}
	}
	if err != nil {
		expiry.Err = errText(err)
	} else {
		expiry.Value, expiry.Ops, expiry.Cost = ms(median(times)), len(times), cost(total, len(times))
	}
	h.add(expiry)
}

// expireLeader expires lead's session and returns the time from the
// server's deletion of its node to next leading, and next's counts meanwhile.
func (h *harness) expireLeader(ctx context.Context, p string, lead, next *participant) (time.Duration, zkcount.Counts, error) {
	sid := lead.drv.SessionID()
	node, err := h.leaderNode(p, sid)
	if err != nil {
		return 0, zkcount.Counts{}, err
	}
	ok, _, ch, err := h.admin.ExistsW(node)
	if err != nil || !ok {
		return 0, zkcount.Counts{}, errors.Join(fmt.Errorf("bench: watch %s", node), err)
	}
	deleted := make(chan int64, 1)
	go func() {
		if _, open := <-ch; open {
			deleted <- Now()
		}
		close(deleted)
	}()
	settle(ctx, next.counter())
	before := next.counter().Snapshot()
	start := Now()
	ectx, cancel := context.WithTimeout(ctx, 20*h.cfg.SessionTimeout)
	defer cancel()
	if err := lead.link.ExpireSession(ectx, sid); err != nil {
		return 0, zkcount.Counts{}, err
	}
	var tDel int64
	select {
	case t, open := <-deleted:
		if !open {
			return 0, zkcount.Counts{}, errors.New("bench: the harness's watch ended without the node's deletion")
		}
		tDel = t
	case <-ectx.Done():
		return 0, zkcount.Counts{}, fmt.Errorf("bench: %s not deleted: %w", node, context.Cause(ectx))
	}
	t1, err := next.drv.WaitLeader(ectx, start)
	if err != nil {
		return 0, zkcount.Counts{}, err
	}
	settle(ctx, next.counter())
	return time.Duration(max(t1-tDel, 0)), next.counter().Snapshot().Sub(before), nil
}
