// Command zkrecipes shows what a zkrecipes, Curator or kazoo recipe holds
// at a ZooKeeper path: holder and waiters in order, the leader, queue depth
// and claims, barrier members, open transactions and their votes, nodes
// whose owner session is connected to no server. It also revokes a lock
// holder (Curator's protocol) and watches a path live. Run it with -h.
//
//	zkrecipes -servers zk1:2181,zk2:2181,zk3:2181 show /locks/orders
//	zkrecipes -servers zk1:2181 -json show /queues/jobs
//	zkrecipes -servers zk1:2181 watch /election/api
//	zkrecipes -servers zk1:2181 revoke /locks/orders
//
// It reads only, except revoke (1 setData per holder revoked).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/zkrecipes/zkrecipes/internal/inspect"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := inspect.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
