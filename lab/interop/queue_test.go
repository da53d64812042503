package interop

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
	"github.com/zkrecipes/zkrecipes/queue"
)

// TestQueueWithCuratorSimpleDistributedQueue: a Go producer and a Curator
// producer put 50 items each on one queue; a Go consumer and a Curator
// consumer take 50 each. Every item is taken exactly once, and each
// consumer sees each producer's items in the order they were put.
func TestQueueWithCuratorSimpleDistributedQueue(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		mixedQueue(t, rel, "queue-put", "queue-take")
	})
}

// TestQueueWithZooKeeperDistributedQueue: the same with ZooKeeper's own
// queue recipe (org.apache.zookeeper.recipes.queue.DistributedQueue), which
// also names items qn-<seq>.
func TestQueueWithZooKeeperDistributedQueue(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		mixedQueue(t, rel, "zkqueue-put", "zkqueue-take")
	})
}

// mixedQueue runs a Go producer and consumer and a Java producer and
// consumer (with the peer commands put and take) on one queue.
func mixedQueue(t *testing.T, rel peers.Release, put, take string) {
	const n = 50
	e := ensemble(t)
	ctx := ctxFor(t, 3*time.Minute)
	path := uniquePath(t, "queue")
	producer := startPeer(t, rel, peers.Curator, e.ConnectString())
	consumer := startPeer(t, rel, peers.Curator, e.ConnectString())
	qp, err := queue.New(session(t, e.Addrs()), path)
	if err != nil {
		t.Fatal(err)
	}
	qc, err := queue.New(session(t, e.Addrs()), path)
	if err != nil {
		t.Fatal(err)
	}

	var javaItems []string
	for i := range n {
		javaItems = append(javaItems, fmt.Sprintf("java-%03d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	var javaTook string
	var goTook []string
	wg.Add(4)
	go func() {
		defer wg.Done()
		if _, err := producer.Do(ctx, put+" "+path+" "+strings.Join(javaItems, " ")); err != nil {
			errs <- err
		}
	}()
	go func() {
		defer wg.Done()
		for i := range n {
			if _, err := qp.Put(ctx, []byte(fmt.Sprintf("go-%03d", i))); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		out, err := consumer.Do(ctx, take+" "+path+" "+strconv.Itoa(n))
		if err != nil {
			errs <- err
		}
		javaTook = out
	}()
	go func() {
		defer wg.Done()
		for range n {
			it, err := qc.Take(ctx)
			if err != nil {
				errs <- err
				return
			}
			goTook = append(goTook, string(it.Data))
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for consumerName, items := range map[string][]string{"java": strings.Fields(javaTook), "go": goTook} {
		if len(items) != n {
			t.Fatalf("%s consumer took %d items, want %d", consumerName, len(items), n)
		}
		last := map[string]int{}
		for _, it := range items {
			if by, dup := seen[it]; dup {
				t.Fatalf("item %s taken by %s and by %s", it, by, consumerName)
			}
			seen[it] = consumerName
			prod, num, ok := strings.Cut(it, "-")
			k, err := strconv.Atoi(num)
			if !ok || err != nil {
				t.Fatalf("unexpected item %q", it)
			}
			if prev, ok := last[prod]; ok && k < prev {
				t.Fatalf("%s consumer took %s after %s-%03d: producer order broken", consumerName, it, prod, prev)
			}
			last[prod] = k
		}
	}
	if len(seen) != 2*n {
		t.Fatalf("%d distinct items taken, want %d", len(seen), 2*n)
	}
	if l, err := qc.Len(ctx); err != nil || l != 0 {
		t.Fatalf("queue length after all taken: %d, %v", l, err)
	}
}
