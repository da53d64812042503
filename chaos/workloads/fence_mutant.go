package workloads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Fence is the fence mutant and its twin: the lock-proc workload (every
// client a worker process, so that freeze-client can stop a holder) whose
// clients write the way fencing exists for: each checks its holding's
// context once, then does a batch of four increments of the counter, each
// after a 50 ms pause (where a process pause lands) and each with a write
// that retries (re-reading the counter) until it lands, is fenced, or two
// session timeouts passed.
//
// The twin writes with lock.Mutex's FencedMulti: a multi that checks the
// version of the holder's node, so a holder frozen past its session
// timeout that thaws and writes is rejected. With Mutant set, the write is
// a multi of the counter's compare-and-set alone, without the check of the
// holder's node: the thawed holder's write lands after another client
// acquired the lock, and the fencing checker catches the stale write.
// Without a process pause the mutant passes too (under cut-short, say): its
// batch takes a fraction of the time its session would need to expire.
type Fence struct {
	Mutant bool
}

// Name is "fence-mutant", or "fence" for the twin.
func (w *Fence) Name() string { return mutantName("fence", w.Mutant) }

// InProcesses is true: clients are worker processes.
func (w *Fence) InProcesses() bool { return true }

// Checkers are the lock workload's.
func (w *Fence) Checkers(cfg CheckConfig) []checkers.Checker { return (&Lock{}).Checkers(cfg) }

// Run makes the lock and counter, starts a worker per client, and stops
// them (closing their standard input, thawing them first) when ctx is done.
func (w *Fence) Run(ctx context.Context, env *cluster.Env) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("chaos: worker executable: %w", err)
	}
	setup, err := env.ConnectSetup(ctx)
	if err != nil {
		return err
	}
	acl := env.ACL()
	_, err = setup.Multi(&zk.CreateRequest{Path: env.Root + "/lock", Acl: acl}, &zk.CreateRequest{Path: env.Root + "/counter", Data: []byte("0"), Acl: acl})
	setup.Close()
	if err != nil {
		return fmt.Errorf("chaos: lock setup: %w", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for i := range env.Clients {
		c, err := env.NewClient(fmt.Sprintf("p%d", i+1))
		if err != nil {
			fail(err)
			break
		}
		spec, _ := json.Marshal(workerSpec{Workload: w.Name(), Client: c.Name, Addrs: c.Addrs(), Root: env.Root,
			SessionTimeout: env.SessionTimeout, OpBase: int64(i+1) << 40, Hold: 50 * time.Millisecond, Security: specSecurity(env.Security)})
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), WorkerEnv+"="+string(spec))
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			fail(err)
			break
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			fail(err)
			break
		}
		if err := cmd.Start(); err != nil {
			fail(fmt.Errorf("chaos: start worker %s: %w", c.Name, err))
			break
		}
		c.SetProcess(cmd.Process)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := readWorker(stdout, env.Rec, c); err != nil {
				fail(err)
			}
			if err := cmd.Wait(); err != nil {
				fail(fmt.Errorf("chaos: worker %s: %w", c.Name, err))
			}
		}()
		go func() {
			<-ctx.Done()
			_ = cmd.Process.Signal(syscall.SIGCONT) // a frozen worker cannot stop
			stdin.Close()
			select {
			case <-time.After(2*env.SessionTimeout + 10*time.Second):
				_ = cmd.Process.Kill()
			case <-waitDone(&wg):
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// processMutants runs, in a worker process, the client of a process
// workload of this file, by workload name (see runWorker).
var processMutants = map[string]func(ctx context.Context, spec workerSpec, secure []recipes.Option, log *history.ClientLog, emit func(workerLine)) error{
	"fence":        fenceWorker,
	"fence-mutant": fenceWorker,
}

// fenceWorker is one client of the Fence workload: Lock, check the
// holding, four times (pause spec.Hold, write until it lands), Unlock,
// until ctx is done.
func fenceWorker(ctx context.Context, spec workerSpec, secure []recipes.Option, log *history.ClientLog, emit func(workerLine)) error {
	st := spec.SessionTimeout
	opts := append([]recipes.Option{recipes.WithSessionTimeout(st), recipes.WithLogger(slog.New(slog.DiscardHandler))}, secure...)
	s, err := recipes.Connect(ctx, spec.Addrs, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("chaos: %s: %w", log.Name(), err)
	}
	defer closeRecipes(s, st)
	go func() { // report the session id, and any new one after expiry
		var last int64
		for ctx.Err() == nil {
			if id := s.Conn().SessionID(); id != 0 && id != last {
				last = id
				emit(workerLine{Session: id})
			}
			cluster.Sleep(ctx, 50*time.Millisecond)
		}
	}()
	lockPath, counter := spec.Root+"/lock", spec.Root+"/counter"
	m, err := lock.New(s, lockPath)
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", log.Name(), err)
	}
	multi := m.FencedMulti
	if spec.Workload == "fence-mutant" {
		// The mutant: the caller's operations alone, without the version
		// check of the holder's node.
		multi = func(_ context.Context, ops ...any) ([]zk.MultiResponse, error) { return s.Conn().Multi(ops...) }
	}
	for ctx.Err() == nil {
		if err := m.Lock(ctx); err != nil {
			if !cluster.Sleep(ctx, 50*time.Millisecond) {
				break
			}
			continue
		}
		token := m.Fence().Token
		log.Acquired(lockPath, token, "")
		held := m.Context()
		watched := watchHolding(log, lockPath, token, held)
		if held.Err() == nil { // checked once, then a batch of work: where a pause hurts
			for range 4 {
				if !cluster.Sleep(ctx, spec.Hold) {
					break
				}
				stubbornIncrement(ctx, s.Conn(), log, multi, counter, token, 2*st)
			}
		}
		if held.Err() == nil {
			log.Released(lockPath, token)
		}
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st)
		_ = m.Unlock(uctx)
		cancel()
		<-watched
		cluster.Sleep(ctx, 5*time.Millisecond)
	}
	return nil
}

// stubbornIncrement increments counter with multi (a compare-and-set on
// its version), re-reading and retrying after a connection error or a
// version conflict until the write lands, is fenced, ctx is done or patience
// passed. Each attempt is recorded as fencedIncrement records it.
func stubbornIncrement(ctx context.Context, conn *zk.Conn, log *history.ClientLog, multi func(context.Context, ...any) ([]zk.MultiResponse, error), counter string, token int64, patience time.Duration) {
	for end := time.Now().Add(patience); ctx.Err() == nil && time.Now().Before(end); cluster.Sleep(ctx, 20*time.Millisecond) {
		if _, err := conn.Sync(counter); err != nil {
			continue
		}
		data, st, err := conn.Get(counter)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(string(data), 10, 64)
		if err != nil {
			return
		}
		op := log.InvokeValue(history.FnFencedCAS, counter, v, v+1)
		_, err = multi(ctx, &zk.SetDataRequest{Path: counter, Data: []byte(strconv.FormatInt(v+1, 10)), Version: st.Version})
		switch {
		case err == nil:
			op.OK(v + 1)
			log.Fenced(counter, token, v+1, true, "")
			return
		case errors.Is(err, recipes.ErrFenced):
			op.Fail(err.Error())
			log.Fenced(counter, token, v+1, false, err.Error())
			return
		case errors.Is(err, zk.ErrBadVersion):
			op.Fail(err.Error())
		default:
			op.Unknown(err.Error())
		}
	}
}
