package workloads

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/cluster"
	"github.com/zkrecipes/zkrecipes/chaos/history"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// WorkerEnv is the environment variable that turns a binary calling
// RunWorkerIfAsked into a chaos worker: one workload client in its own
// process, so the freeze-client fault can stop it with SIGSTOP.
const WorkerEnv = "ZKCHAOS_WORKER"

// workerSpec is what the parent passes to a worker in WorkerEnv (JSON).
type workerSpec struct {
	Workload       string        `json:"workload"`
	Client         string        `json:"client"`
	Addrs          []string      `json:"addrs"`
	Root           string        `json:"root"`
	SessionTimeout time.Duration `json:"session_timeout"`
	OpBase         int64         `json:"op_base"` // operation ids start above it
	Hold           time.Duration `json:"hold"`    // Lock.Hold
	// Security is the scenario's cluster.Security for the worker's
	// session; nil for a plain one. The password travels in the worker's
	// environment, which only its user (and root) may read.
	Security *workerSecurity `json:"security,omitempty"`
}

// workerSecurity is cluster.Security as a worker process gets it: the CA's
// PEM instead of a *tls.Config.
type workerSecurity struct {
	CAPEM      string `json:"ca_pem,omitempty"`
	ServerName string `json:"server_name,omitempty"`
	User       string `json:"user,omitempty"`
	Password   string `json:"password,omitempty"`
}

// specSecurity returns sec for a worker's spec, nil for a plain session.
// A TLS session without the CA's PEM cannot be handed over: the runner
// reports such scenarios not applicable.
func specSecurity(sec cluster.Security) *workerSecurity {
	if !sec.Secure() {
		return nil
	}
	ws := &workerSecurity{CAPEM: string(sec.CAPEM), User: sec.User, Password: sec.Password}
	if sec.TLS != nil {
		ws.ServerName = sec.TLS.ServerName
	}
	return ws
}

// options returns the recipes.Session options of ws (none for nil).
func (ws *workerSecurity) options() ([]recipes.Option, error) {
	if ws == nil {
		return cluster.Security{}.RecipeOptions(), nil // the ensemble timing alone
	}
	sec := cluster.Security{User: ws.User, Password: ws.Password}
	if ws.CAPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(ws.CAPEM)) {
			return nil, fmt.Errorf("%w: CA PEM holds no certificate", ErrWorkerSpec)
		}
		sec.TLS = &tls.Config{RootCAs: pool, ServerName: ws.ServerName, MinVersion: tls.VersionTLS12}
	}
	return sec.RecipeOptions(), nil
}

// workerLine is one line a worker writes on its standard output.
type workerLine struct {
	Event   *history.Event `json:"event,omitempty"`
	Session int64          `json:"session,omitempty"`
	Err     string         `json:"err,omitempty"`
}

// RunWorkerIfAsked runs a chaos worker and exits when WorkerEnv is set;
// otherwise it returns at once. Binaries that run process workloads
// (cmd/zkchaos, the chaos tests' TestMain) call it first thing. The worker
// streams its events as JSON lines on standard output, with CLOCK_MONOTONIC
// timestamps that the parent keeps, and stops when its standard input
// closes.
func RunWorkerIfAsked() {
	raw := os.Getenv(WorkerEnv)
	if raw == "" {
		return
	}
	code := 0
	if err := runWorker(raw, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chaos worker:", err)
		code = 1
	}
	os.Exit(code)
}

func runWorker(raw string, stdin io.Reader, stdout io.Writer) error {
	var spec workerSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return fmt.Errorf("%w: %v", ErrWorkerSpec, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the parent closes our stdin to stop us
		_, _ = io.Copy(io.Discard, stdin)
		cancel()
	}()
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	emit := func(l workerLine) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(l)
	}
	secure, err := spec.Security.options()
	if err != nil {
		return err
	}
	rec := history.NewTeeRecorder(spec.OpBase, func(e history.Event) { emit(workerLine{Event: &e}) })
	log := rec.Client(spec.Client)
	switch spec.Workload {
	case "lock", "lock-proc":
		w := &Lock{Hold: spec.Hold}
		err := w.loop(ctx, spec.Addrs, spec.SessionTimeout, log, spec.Root+"/lock", spec.Root+"/counter", nil, secure,
			func(conn *zk.Conn) {
				go func() { // report the session id, and any new one after expiry
					var last int64
					for ctx.Err() == nil {
						if id := conn.SessionID(); id != 0 && id != last {
							last = id
							emit(workerLine{Session: id})
						}
						cluster.Sleep(ctx, 50*time.Millisecond)
					}
				}()
			}, nil, nil)
		if err != nil {
			emit(workerLine{Err: err.Error()})
		}
		return err
	}
	if run := processMutants[spec.Workload]; run != nil {
		return run(ctx, spec, secure, log, emit)
	}
	return fmt.Errorf("%w: %q in a worker", ErrUnknownWorkload, spec.Workload)
}

// readWorker adds a worker's events to rec and follows its session id.
func readWorker(r io.Reader, rec *history.Recorder, c *cluster.Client) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var werr error
	for sc.Scan() {
		var l workerLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			continue
		}
		switch {
		case l.Event != nil:
			e := *l.Event
			e.Client = c.Name
			rec.Add(e)
		case l.Session != 0:
			c.SetSession(l.Session)
		case l.Err != "":
			werr = fmt.Errorf("chaos: worker %s: %s", c.Name, l.Err)
		}
	}
	return werr
}
