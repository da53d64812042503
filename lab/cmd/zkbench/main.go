// Command zkbench runs zkrecipes side by side with go-zookeeper's zk.Lock,
// Apache Curator 5.4 and kazoo 2.8 on one ZooKeeper ensemble in one run, and
// prints a table: each implementation's figure, its speed relative to
// zkrecipes, and its requests, listings and notifications per operation
// against the floor, all counted on the wire by the same proxy (the
// progress lines and results.json add the bytes per operation each way).
// It writes results.json, results.md and results.svg into -out.
//
//	go run ./lab/cmd/zkbench [-impls zkrecipes,go-zookeeper,curator,kazoo]
//	                     [-workloads uncontended,contended,leader,queue,rwlock,counter,multilock,treecache]
//	                     [-iterations 200] [-duration 3s] [-contenders 2,8,32]
//	                     [-resign-rounds 5] [-expiry-rounds 2] [-queue-items 300]
//	                     [-consumers 1,4,8] [-rw-clients 8] [-counter-clients 1,4,16]
//	                     [-multi-contenders 2,8] [-tree-fanout 10] [-tree-writers 32]
//	                     [-out bench-out]
//
// Curator needs javac and Debian's libcurator-recipes-java, kazoo Debian's
// python3-kazoo; a missing one is reported (with what to install) and its
// rows say n/a. The defaults finish in a few minutes on 2 cores; figures are
// only comparable within one run, on a quiet machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/bench"
	"github.com/zkrecipes/zkrecipes/lab/bench/scale"
	"github.com/zkrecipes/zkrecipes/testenv"
)

func main() {
	os.Exit(run())
}

func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range list(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run() int {
	impls := flag.String("impls", strings.Join(bench.AllImpls, ","), "implementations to run, comma-separated")
	workloads := flag.String("workloads", strings.Join(bench.AllWorkloads, ","), "workloads to run, comma-separated")
	iterations := flag.Int("iterations", 200, "uncontended acquire+release cycles measured")
	warmup := flag.Int("warmup", 20, "uncontended cycles run before measuring")
	duration := flag.Duration("duration", 3*time.Second, "length of each contended, rw lock, counter, contended multi-lock and tree cache run")
	contenders := flag.String("contenders", "2,8,32", "contended levels")
	resignRounds := flag.Int("resign-rounds", 5, "graceful leader handoffs measured")
	expiryRounds := flag.Int("expiry-rounds", 2, "leader handoffs after session loss measured")
	queueItems := flag.Int("queue-items", 300, "items per queue phase")
	consumers := flag.String("consumers", "1,4,8", "queue consumer counts (zkrecipes also runs each count above 1 with queue.WithSpread, as queue-take-K-spread)")
	rwClients := flag.Int("rw-clients", 8, "rw lock clients")
	rwWriteEvery := flag.Int("rw-write-every", 10, "one rw lock operation in this many is a write")
	counterClients := flag.String("counter-clients", "1,4,16", "counter contention levels (clients incrementing one counter)")
	multiContenders := flag.String("multi-contenders", "2,8", "contended multi-lock levels")
	treeFanout := flag.Int("tree-fanout", 10, "tree cache workload: children of the root, and of each child (10: 111 nodes)")
	treeWriters := flag.Int("tree-writers", 32, "tree cache workload: sets in flight on the writer's session")
	sessionTimeout := flag.Duration("session-timeout", 3*time.Second, "every client's session timeout")
	servers := flag.Int("servers", 3, "ZooKeeper servers in the ensemble")
	backend := flag.String("backend", string(testenv.BackendContainers), "testenv backend: containers or processes")
	out := flag.String("out", "bench-out", "directory for results.json, results.md and results.svg")
	verbose := flag.Bool("v", false, "log ensemble details")
	scaleRun := flag.Bool("scale", false, "measure how costs grow with size instead (series: -series); writes scale.json, scale.md and one log-log SVG per figure to -out")
	series := flag.String("series", "", "with -scale: series to run, comma-separated (default all: "+strings.Join(scale.Names(), ",")+")")
	budget := flag.Duration("budget", 15*time.Minute, "with -scale: the whole run's time; each series fits its share")
	serverHeap := flag.Int("server-heap", 0, "each server's maximum heap in MB (default: testenv's 128, or 1280 with -scale, enough for the queue series' million items)")
	flag.Parse()

	cs, err := ints(*contenders)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkbench: -contenders:", err)
		return 2
	}
	cons, err := ints(*consumers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkbench: -consumers:", err)
		return 2
	}
	ccs, err := ints(*counterClients)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkbench: -counter-clients:", err)
		return 2
	}
	mcs, err := ints(*multiContenders)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkbench: -multi-contenders:", err)
		return 2
	}
	cfg, err := bench.Config{
		Impls: list(*impls), Workloads: list(*workloads), Iterations: *iterations, Warmup: *warmup,
		Duration: *duration, Contenders: cs, ResignRounds: *resignRounds, ExpiryRounds: *expiryRounds,
		QueueItems: *queueItems, Consumers: cons, RWClients: *rwClients, RWWriteEvery: *rwWriteEvery,
		CounterClients: ccs, MultiContenders: mcs, TreeFanout: *treeFanout, TreeWriters: *treeWriters,
		SessionTimeout: *sessionTimeout, Progress: os.Stdout,
	}.WithDefaults()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		return 2
	}
	for _, impl := range cfg.Impls {
		if err := bench.Available(impl); err != nil {
			fmt.Fprintf(os.Stderr, "zkbench: %s will be skipped: %v\n", impl, err)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	fmt.Printf("zkbench: starting a %d-server ensemble (%s)...\n", *servers, *backend)
	heapMB := *serverHeap
	if heapMB == 0 && *scaleRun {
		heapMB = 1280
	}
	tcfg := testenv.Config{Servers: *servers, Backend: testenv.Backend(*backend), Logger: logger}
	if heapMB > 0 {
		tcfg.JavaHeap = fmt.Sprintf("%dm", heapMB)
	}
	e, err := testenv.Start(ctx, tcfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		return 1
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if err := e.Close(cctx); err != nil {
			fmt.Fprintln(os.Stderr, "zkbench:", err)
		}
	}()

	if *scaleRun {
		return runScale(ctx, e, scale.Config{Impls: cfg.Impls, Series: list(*series), Budget: *budget,
			SessionTimeout: *sessionTimeout, ServerHeapMB: heapMB, Progress: os.Stdout}, *out)
	}
	rep, err := bench.Run(ctx, e, cfg)
	if err != nil && (rep == nil || !errors.Is(err, context.Canceled)) {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		if rep == nil {
			return 1
		}
	}
	rep.Command = "go run ./lab/cmd/zkbench " + strings.Join(os.Args[1:], " ")
	rep.Command = strings.TrimSpace(rep.Command)
	rep.Backend, rep.Servers = string(e.Backend()), e.Servers()
	fmt.Println()
	if err := rep.WriteText(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
	}
	fmt.Println()
	fmt.Println(rep.Caption())
	for _, n := range rep.Notes {
		fmt.Println("note:", n)
	}
	for _, l := range rep.Behind() {
		fmt.Println("behind:", l)
	}
	if err := rep.WriteFiles(*out); err != nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		return 1
	}
	fmt.Printf("zkbench: wrote %s/results.json, results.md, results.svg\n", *out)
	return 0
}

// runScale runs the scale series and writes their figures to out.
func runScale(ctx context.Context, e *testenv.Ensemble, cfg scale.Config, out string) int {
	rep, err := scale.Run(ctx, e, cfg)
	if err != nil && rep == nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		return 1
	}
	if err := rep.Write(out); err != nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		return 1
	}
	fmt.Printf("zkbench: %d figures in %s, wrote %s/scale.json, scale.md and the SVGs\n", len(rep.Figures), rep.Took, out)
	for name, msg := range rep.Errors {
		fmt.Fprintf(os.Stderr, "zkbench: series %s failed: %s\n", name, msg)
	}
	if err != nil || len(rep.Errors) > 0 {
		return 1
	}
	return 0
}
