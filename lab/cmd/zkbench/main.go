// Command zkbench runs zkrecipes side by side with go-zookeeper's zk.Lock,
// Apache Curator 5.4 and kazoo 2.8 on one ZooKeeper ensemble in one run, and
// prints a table: each implementation's figure, its speed relative to
// zkrecipes, and its requests, listings and notifications per operation
// against the floor, all counted on the wire by the same proxy. It writes
// results.json, results.md and results.svg into -out.
//
//	go run ./lab/cmd/zkbench [-impls zkrecipes,go-zookeeper,curator,kazoo]
//	                     [-workloads uncontended,contended,leader,queue,rwlock]
//	                     [-iterations 200] [-duration 3s] [-contenders 2,8,32]
//	                     [-resign-rounds 5] [-expiry-rounds 2] [-queue-items 300]
//	                     [-consumers 1,4] [-rw-clients 8] [-out bench-out]
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
	"github.com/zkrecipes/zkrecipes/lab/testenv"
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
	duration := flag.Duration("duration", 3*time.Second, "length of each contended and rw lock run")
	contenders := flag.String("contenders", "2,8,32", "contended levels")
	resignRounds := flag.Int("resign-rounds", 5, "graceful leader handoffs measured")
	expiryRounds := flag.Int("expiry-rounds", 2, "leader handoffs after session loss measured")
	queueItems := flag.Int("queue-items", 300, "items per queue phase")
	consumers := flag.String("consumers", "1,4", "queue consumer counts")
	rwClients := flag.Int("rw-clients", 8, "rw lock clients")
	rwWriteEvery := flag.Int("rw-write-every", 10, "one rw lock operation in this many is a write")
	sessionTimeout := flag.Duration("session-timeout", 3*time.Second, "every client's session timeout")
	servers := flag.Int("servers", 3, "ZooKeeper servers in the ensemble")
	backend := flag.String("backend", string(testenv.BackendContainers), "testenv backend: containers or processes")
	out := flag.String("out", "bench-out", "directory for results.json, results.md and results.svg")
	verbose := flag.Bool("v", false, "log ensemble details")
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
	cfg, err := bench.Config{
		Impls: list(*impls), Workloads: list(*workloads), Iterations: *iterations, Warmup: *warmup,
		Duration: *duration, Contenders: cs, ResignRounds: *resignRounds, ExpiryRounds: *expiryRounds,
		QueueItems: *queueItems, Consumers: cons, RWClients: *rwClients, RWWriteEvery: *rwWriteEvery,
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
	e, err := testenv.Start(ctx, testenv.Config{Servers: *servers, Backend: testenv.Backend(*backend), Logger: logger})
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
	if err := rep.WriteFiles(*out); err != nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		return 1
	}
	fmt.Printf("zkbench: wrote %s/results.json, results.md, results.svg\n", *out)
	return 0
}
