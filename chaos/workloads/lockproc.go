package workloads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
)

// LockProc is the lock workload with every client in its own worker
// process (this binary re-executed with WorkerEnv set; see
// RunWorkerIfAsked), so the freeze-client fault can SIGSTOP a holder past
// its session timeout. A frozen holder cannot step down, so it still
// believes it holds when it thaws: mutual exclusion of beliefs is void
// under that fault, and fencing is what must hold (ZooKeeper rejects the
// thawed holder's writes). The matrix gives it only the faults that need
// processes; the lock workload covers the rest. Holders keep the lock
// 50 ms per write so that the fault finds one holding. A worker killed by
// the kill-client fault is replaced by a new process (a new session) under
// the same client name; its holding is recorded lost at its death.
type LockProc struct{}

// Name is "lock-proc".
func (w *LockProc) Name() string { return "lock-proc" }

// InProcesses is true: clients are worker processes.
func (w *LockProc) InProcesses() bool { return true }

// Checkers are the lock workload's.
func (w *LockProc) Checkers(cfg CheckConfig) []checkers.Checker { return (&Lock{}).Checkers(cfg) }

// Run makes the lock and counter, starts a worker per client, and stops
// them (closing their standard input, thawing them first) when ctx is done.
func (w *LockProc) Run(ctx context.Context, env *cluster.Env) error {
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
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// a worker the kill-client fault killed is replaced by a new one
			for gen := int64(0); ; gen++ {
				killed, err := w.worker(ctx, env, exe, c, int64(i+1)<<40+gen<<32)
				if err != nil {
					fail(err)
				}
				if !killed || ctx.Err() != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// worker runs one worker process for client c until it exits, stopping it
// (thawing it first) when ctx is done. It reports whether the kill-client
// fault killed it; then it records the loss of the holding the process had.
func (w *LockProc) worker(ctx context.Context, env *cluster.Env, exe string, c *cluster.Client, opBase int64) (bool, error) {
	spec, _ := json.Marshal(workerSpec{Workload: w.Name(), Client: c.Name, Addrs: c.Addrs(), Root: env.Root,
		SessionTimeout: env.SessionTimeout, OpBase: opBase, Hold: 50 * time.Millisecond, Security: specSecurity(env.Security)})
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), WorkerEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return false, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return false, err
	}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("chaos: start worker %s: %w", c.Name, err)
	}
	c.SetProcess(cmd.Process)
	exited := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-exited:
			return
		}
		_ = cmd.Process.Signal(syscall.SIGCONT) // a frozen worker cannot stop
		stdin.Close()
		select {
		case <-time.After(2*env.SessionTimeout + 10*time.Second):
			_ = cmd.Process.Kill()
		case <-exited:
		}
	}()
	rerr := readWorker(stdout, env.Rec, c)
	werr := cmd.Wait()
	close(exited)
	if at, ok := cluster.KilledByFault(cmd.Process.Pid); ok {
		cluster.UnmarkKilled(cmd.Process.Pid)
		cluster.RecordKilled(env, c.Name, at)
		return true, nil
	}
	if werr != nil {
		werr = fmt.Errorf("chaos: worker %s: %w", c.Name, werr)
	}
	return false, errors.Join(rerr, werr)
}

// waitDone returns a channel closed when wg is done.
func waitDone(wg *sync.WaitGroup) <-chan struct{} {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	return ch
}
