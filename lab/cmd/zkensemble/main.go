// Command zkensemble starts a local ZooKeeper ensemble with testenv, prints
// each server's mode and the connect strings, and tears it down: the quick
// check that this machine can run everything else. With -hold it keeps the
// ensemble up until interrupted, for manual experiments (zkCli, Curator).
//
//	go run ./lab/cmd/zkensemble [-servers 3] [-backend containers|processes] [-hold]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zkrecipes/zkrecipes/testenv"
)

func main() {
	servers := flag.Int("servers", 3, "number of ZooKeeper servers (1 to 5)")
	backend := flag.String("backend", "", "containers or processes (default: $ZKRECIPES_BACKEND, else containers when Docker answers)")
	hold := flag.Bool("hold", false, "keep the ensemble up until interrupted")
	flag.Parse()
	if err := run(*servers, testenv.Backend(*backend), *hold); err != nil {
		fmt.Fprintln(os.Stderr, "zkensemble:", err)
		os.Exit(1)
	}
}

func run(servers int, backend testenv.Backend, hold bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	began := time.Now()
	e, err := testenv.Start(ctx, testenv.Config{Servers: servers, Backend: backend, Logger: logger})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := e.Close(cctx); err != nil {
			fmt.Fprintln(os.Stderr, "zkensemble:", err)
		}
	}()
	fmt.Printf("ensemble %s on %s, ready in %v\n", e.ID(), e.Backend(), time.Since(began).Round(time.Millisecond))
	direct := e.DirectAddrs()
	for i, a := range e.Addrs() {
		mode, err := e.Mode(ctx, i)
		if err != nil {
			mode = "error: " + err.Error()
		}
		fmt.Printf("server %d (myid %d): %-10s proxied %s  direct %s\n", i, i+1, mode, a, direct[i])
	}
	fmt.Printf("connect string: %s\n", e.ConnectString())
	if hold {
		fmt.Println("holding; interrupt to tear down")
		<-ctx.Done()
	}
	return nil
}
