// Command zkrecipes shows what a zkrecipes, Curator or kazoo recipe holds
// at a ZooKeeper path: holder and waiters in order, the leader, queue depth
// and claims, barrier members, open transactions and their votes, and
// whether each owner's session is connected to the ensemble. It also
// revokes a lock holder (Curator's protocol) and watches a path live. Run
// it with -h. Flags may come before or after the command, and the
// connection flags may come from the environment ($ZKRECIPES_SERVERS,
// $ZKRECIPES_DIGEST, $ZKRECIPES_TLS_CA, ...):
//
//	zkrecipes -servers zk1:2181,zk2:2181,zk3:2181 show /locks/orders
//	export ZKRECIPES_SERVERS=zk1:2181,zk2:2181,zk3:2181
//	zkrecipes show /queues/jobs -o json
//	zkrecipes show /locks/orders -o wide
//	zkrecipes watch /election/api
//	zkrecipes revoke /locks/orders
//	zkrecipes -version
//
// It reads only, except revoke (1 setData per node revoked).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/zkrecipes/zkrecipes/cmd/zkrecipes/inspect"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := inspect.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
