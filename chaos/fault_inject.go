package chaos

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/zkrecipes/zkrecipes/testenv"
)

// linkFault applies set to every client's link; heal undoes it on each.
func linkFault(set func(c *Client, w Window, sessionTimeout time.Duration) error, heal func(c *Client) error) func(context.Context, *Env, Window) (healFunc, error) {
	return func(_ context.Context, env *Env, w Window) (healFunc, error) {
		clients := env.ClientList()
		undo := func(context.Context) error {
			var errs []error
			for _, c := range clients {
				errs = append(errs, heal(c))
			}
			return errors.Join(errs...)
		}
		for _, c := range clients {
			if err := set(c, w, env.SessionTimeout); err != nil {
				_ = undo(context.Background())
				return nil, err
			}
		}
		return undo, nil
	}
}

func restoreLink(c *Client) error { return c.Link.Restore() }
func healLink(c *Client) error    { return c.Link.Heal() }

// victim returns the client w picks.
func victim(env *Env, w Window) (*Client, error) {
	cs := env.ClientList()
	if len(cs) == 0 {
		return nil, errors.New("no clients")
	}
	return cs[w.Victim%len(cs)], nil
}

func injectExpire(ctx context.Context, env *Env, w Window) (healFunc, error) {
	c, err := victim(env, w)
	if err != nil {
		return nil, err
	}
	id := c.Session()
	if id == 0 {
		return nil, fmt.Errorf("client %s has no session", c.Name)
	}
	ectx, cancel := context.WithTimeout(ctx, 4*env.SessionTimeout+30*time.Second)
	defer cancel()
	if err := c.Link.ExpireSession(ectx, id); err != nil {
		return nil, err
	}
	return func(context.Context) error { return nil }, nil
}

// waitQuorum heals the ensemble: it returns once a quorum serves.
func waitQuorum(ctx context.Context, e *testenv.Ensemble) error {
	qctx, cancel := context.WithTimeout(ctx, healTimeout)
	defer cancel()
	if err := e.WaitQuorum(qctx); err != nil {
		return fmt.Errorf("%w: %v", ErrHeal, err)
	}
	return nil
}

// pickServer returns the leader (leader) or a follower chosen by w.
func pickServer(ctx context.Context, e *testenv.Ensemble, w Window, leader bool) (int, error) {
	ldr, err := e.Leader(ctx)
	if err != nil {
		return -1, err
	}
	if leader || e.Servers() == 1 {
		return ldr, nil
	}
	var others []int
	for i := range e.Servers() {
		if i != ldr {
			others = append(others, i)
		}
	}
	return others[w.Server%len(others)], nil
}

func injectKill(leader bool) func(context.Context, *Env, Window) (healFunc, error) {
	return func(ctx context.Context, env *Env, w Window) (healFunc, error) {
		e := env.Ensemble
		i, err := pickServer(ctx, e, w, leader)
		if err != nil {
			return nil, err
		}
		if err := e.Kill(ctx, i); err != nil {
			return nil, err
		}
		return func(ctx context.Context) error {
			if err := e.StartServer(ctx, i); err != nil {
				return err
			}
			return waitQuorum(ctx, e)
		}, nil
	}
}

func injectSlowClose(ctx context.Context, env *Env, w Window) (healFunc, error) {
	slow := linkFault(func(c *Client, _ Window, st time.Duration) error { return c.Link.SlowClose(st / 2) }, healLink)
	healSlow, err := slow(ctx, env, w)
	if err != nil {
		return nil, err
	}
	healKill, err := injectKill(false)(ctx, env, w)
	if err != nil {
		_ = healSlow(ctx)
		return nil, err
	}
	return func(ctx context.Context) error {
		return errors.Join(healSlow(ctx), healKill(ctx))
	}, nil
}

func injectPause(ctx context.Context, env *Env, w Window) (healFunc, error) {
	e := env.Ensemble
	i := w.Server % e.Servers()
	if err := e.Pause(ctx, i); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if err := e.Resume(ctx, i); err != nil {
			return err
		}
		return waitQuorum(ctx, e)
	}, nil
}

func injectIsolate(ctx context.Context, env *Env, w Window) (healFunc, error) {
	e := env.Ensemble
	i, err := pickServer(ctx, e, w, true)
	if err != nil {
		return nil, err
	}
	if err := e.Isolate(ctx, i); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if err := e.Rejoin(ctx, i); err != nil {
			return err
		}
		return waitQuorum(ctx, e)
	}, nil
}

func injectLoseQuorum(ctx context.Context, env *Env, w Window) (healFunc, error) {
	e := env.Ensemble
	n := e.Servers()
	if n < 2 {
		return nil, fmt.Errorf("%w: lose-quorum needs 2 or more servers", ErrUnsupported)
	}
	// kill a majority, starting at a seeded server
	var killed []int
	for k := range n/2 + 1 {
		i := (w.Server + k) % n
		if err := e.Kill(ctx, i); err != nil {
			for _, j := range killed {
				_ = e.StartServer(ctx, j)
			}
			return nil, err
		}
		killed = append(killed, i)
	}
	return func(ctx context.Context) error {
		var errs []error
		for _, i := range killed {
			errs = append(errs, e.StartServer(ctx, i))
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		return waitQuorum(ctx, e)
	}, nil
}

// holder returns a client that holds something now, preferring the one w
// picks, or nil: freezing a holder is what tests fencing.
func holder(env *Env, w Window) *Client {
	h := env.Rec.History()
	holding := map[string]bool{}
	for _, hd := range Holdings(h) {
		if hd.Ended == "" {
			holding[hd.Client] = true
		}
	}
	cs := env.ClientList()
	for k := range cs {
		if c := cs[(w.Victim+k)%len(cs)]; holding[c.Name] {
			return c
		}
	}
	return nil
}

func injectFreeze(ctx context.Context, env *Env, w Window) (healFunc, error) {
	var c *Client
	deadline := time.Now().Add(env.SessionTimeout)
	for c == nil && time.Now().Before(deadline) && ctx.Err() == nil {
		if c = holder(env, w); c == nil {
			<-time.After(5 * time.Millisecond)
		}
	}
	if c == nil {
		var err error
		if c, err = victim(env, w); err != nil {
			return nil, err
		}
	}
	pid := c.PID()
	if pid == 0 {
		return nil, fmt.Errorf("%w: client %s runs in-process", ErrUnsupported, c.Name)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, err
	}
	return func(context.Context) error { return syscall.Kill(pid, syscall.SIGCONT) }, nil
}
