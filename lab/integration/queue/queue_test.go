package queue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func TestBadInput(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)

	// Nil session and nil receivers: sentinel errors, no panic.
	if q, err := queue.New(nil, "/q"); q != nil || !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("New with a nil session: %v, %v", q, err)
	}
	var nilQ *queue.Queue
	if _, err := nilQ.Take(ctx); !errors.Is(err, queue.ErrNilReceiver) {
		t.Errorf("Take on nil queue: %v", err)
	}
	if _, err := nilQ.Put(ctx, nil); !errors.Is(err, queue.ErrNilReceiver) {
		t.Errorf("Put on nil queue: %v", err)
	}
	var nilC *queue.Claim
	if err := nilC.Ack(ctx); !errors.Is(err, queue.ErrNilReceiver) {
		t.Errorf("Ack on nil claim: %v", err)
	}

	for _, p := range []string{"", "q", "/q/", "/a//b", "/a/../b", "/zookeeper/q", "/a\x00b"} {
		if q, err := queue.New(s, p); q != nil || !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("New(%q) = %v, %v; want ErrInvalidPath", p, q, err)
		}
	}
	if _, err := queue.New(s, "/q", queue.WithClaimPath("rel")); !errors.Is(err, recipes.ErrInvalidPath) {
		t.Errorf("bad claim path: %v", err)
	}

	path := testPath(t)
	q := newQueue(t, s, path)
	if q.MaxData() < s.MaxData()-200 || q.MaxData() >= s.MaxData() {
		t.Errorf("MaxData = %d with a session limit of %d", q.MaxData(), s.MaxData())
	}
	big := make([]byte, q.MaxData()+1)
	if _, err := q.Put(ctx, big); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("Put %d bytes: %v, want ErrDataTooLarge", len(big), err)
	}
	if _, err := q.PutAll(ctx, [][]byte{[]byte("a"), big}); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("PutAll with a big item: %v", err)
	}
	half := make([]byte, s.MaxData()/2)
	if _, err := q.PutAll(ctx, [][]byte{half, half, half}); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("PutAll of a big batch: %v", err)
	}
	if _, err := q.PutPriority(ctx, nil, 1); !errors.Is(err, queue.ErrPriority) {
		t.Errorf("PutPriority on a FIFO queue: %v", err)
	}
	pq := newQueue(t, s, path, queue.WithPriority())
	for _, p := range []int{-1, 1000} {
		if _, err := pq.PutPriority(ctx, nil, p); !errors.Is(err, queue.ErrPriority) {
			t.Errorf("PutPriority %d: %v", p, err)
		}
	}
	if got := children(t, s, path); len(got) != 0 {
		t.Errorf("bad input wrote %v", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := q.Take(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Take with a cancelled ctx: %v", err)
	}
}

func TestPutTakePollPeekLen(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	q := newQueue(t, s, testPath(t))

	if _, err := q.Poll(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("Poll on a missing queue: %v", err)
	}
	if _, err := q.Peek(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("Peek on a missing queue: %v", err)
	}
	if n, err := q.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len = %d, %v", n, err)
	}
	name, err := q.Put(ctx, []byte("one"))
	if err != nil || !strings.HasPrefix(name, "qn-") {
		t.Fatalf("Put = %q, %v", name, err)
	}
	names, err := q.PutAll(ctx, [][]byte{[]byte("two"), []byte("three")})
	if err != nil || len(names) != 2 {
		t.Fatalf("PutAll = %v, %v", names, err)
	}
	// One transaction: consecutive sequence numbers, after the Put's.
	seqs := make([]int32, 3)
	for i, n := range append([]string{name}, names...) {
		v, ok := recipes.ParseSeq(strings.TrimPrefix(n, "qn-"))
		if !ok {
			t.Fatalf("bad name %q", n)
		}
		seqs[i] = v
	}
	if seqs[1] != seqs[0]+1 || seqs[2] != seqs[1]+1 {
		t.Fatalf("sequences %v", seqs)
	}
	// Data up to the server's limit goes through.
	big := bytes.Repeat([]byte{'z'}, q.MaxData())
	if _, err := q.Put(ctx, big); err != nil {
		t.Fatalf("Put %d bytes: %v", len(big), err)
	}
	if n, err := q.Len(ctx); err != nil || n != 4 {
		t.Fatalf("Len = %d, %v; want 4", n, err)
	}
	if it, err := q.Peek(ctx); err != nil || string(it.Data) != "one" {
		t.Fatalf("Peek = %q, %v", it.Data, err)
	}
	for _, want := range []string{"one", "two", "three"} {
		it, err := q.Take(ctx)
		if err != nil || string(it.Data) != want {
			t.Fatalf("Take = %q, %v; want %q", it.Data, err, want)
		}
	}
	it, err := q.Poll(ctx)
	if err != nil || !bytes.Equal(it.Data, big) {
		t.Fatalf("Poll of the big item: %d bytes, %v", len(it.Data), err)
	}
	if _, err := q.Poll(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("Poll on an empty queue: %v", err)
	}

	// Take blocks until a Put.
	got := make(chan queue.Item, 1)
	go func() {
		it, err := q.Take(ctx)
		if err != nil {
			t.Errorf("blocked Take: %v", err)
		}
		got <- it
	}()
	other := newQueue(t, connect(t, e.Addrs()), q.Path())
	if _, err := other.Put(ctx, []byte("late")); err != nil {
		t.Fatal(err)
	}
	select {
	case it := <-got:
		if string(it.Data) != "late" {
			t.Fatalf("blocked Take got %q", it.Data)
		}
	case <-ctx.Done():
		t.Fatal("blocked Take never returned")
	}

	// A Take waiting on an empty queue returns ctx's cause.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := q.Take(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take on an empty queue with a deadline: %v", err)
	}
}

func TestPriority(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	path := testPath(t)
	q := newQueue(t, s, path, queue.WithPriority())
	for _, p := range []int{5, 1, 3} {
		if _, err := q.PutPriority(ctx, []byte(fmt.Sprint(p)), p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Put(ctx, []byte("default")); err != nil {
		t.Fatal(err)
	}
	it, err := q.Take(ctx)
	if err != nil || string(it.Data) != "1" || it.Priority != 1 {
		t.Fatalf("first Take = %+v, %v", it, err)
	}
	// The consumer has cached 3, 5, default; a more urgent item put now is
	// still taken first: its put fired the consumer's child watch.
	if _, err := newQueue(t, connect(t, e.Addrs()), path, queue.WithPriority()).PutPriority(ctx, []byte("0"), 0); err != nil {
		t.Fatal(err)
	}
	var order []string
	waitFor(t, 10*time.Second, "the put to reach the consumer's watch", func() bool {
		it, err := q.Peek(ctx)
		return err == nil && string(it.Data) == "0"
	})
	for range 4 {
		it, err := q.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, string(it.Data))
	}
	if want := []string{"0", "3", "5", "default"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}

func TestKazooNames(t *testing.T) {
	e := ensemble(t)
	s := connect(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	q := newQueue(t, s, testPath(t), queue.WithDialect(recipes.Kazoo))
	name, err := q.Put(ctx, []byte("k"))
	if err != nil || !strings.HasPrefix(name, "entry-100-") {
		t.Fatalf("Put = %q, %v", name, err)
	}
	if it, err := q.Take(ctx); err != nil || string(it.Data) != "k" {
		t.Fatalf("Take = %+v, %v", it, err)
	}
}

// TestProducersConsumers: 4 producers x 4 consumers x 500 items, every
// process with its own session. None lost, none twice, each producer's
// order kept (in the queue, and as seen by each consumer).
func TestProducersConsumers(t *testing.T) {
	const producers, consumers, perProducer = 4, 4, 500
	e := ensemble(t)
	ctx := ctxT(t, 3*time.Minute)
	path := testPath(t)

	type got struct {
		producer, k int
		seq         int32
	}
	results := make([][]got, consumers)
	var taken atomic.Int64
	done, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for c := range consumers {
		q := newQueue(t, connect(t, e.Addrs()), path)
		wg.Go(func() {
			for {
				it, err := q.Take(done)
				if err != nil {
					if done.Err() == nil {
						t.Errorf("consumer %d: %v", c, err)
					}
					return
				}
				var p, k int
				if _, err := fmt.Sscanf(string(it.Data), "p%d-%d", &p, &k); err != nil {
					t.Errorf("consumer %d: bad item %q", c, it.Data)
				}
				results[c] = append(results[c], got{p, k, it.Seq})
				if taken.Add(1) == producers*perProducer {
					stop()
				}
			}
		})
	}
	start := time.Now()
	for p := range producers {
		q := newQueue(t, connect(t, e.Addrs()), path)
		wg.Go(func() {
			for k := range perProducer {
				if _, err := q.Put(ctx, fmt.Appendf(nil, "p%d-%d", p, k)); err != nil {
					t.Errorf("producer %d: %v", p, err)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d items through %d producers and %d consumers in %v", producers*perProducer, producers, consumers, time.Since(start))

	seen := make(map[[2]int]bool)
	bySeq := make(map[int][]got)
	for c, rs := range results {
		last := make(map[int]int)
		for _, r := range rs {
			key := [2]int{r.producer, r.k}
			if seen[key] {
				t.Errorf("item p%d-%d delivered twice", r.producer, r.k)
			}
			seen[key] = true
			if l, ok := last[r.producer]; ok && r.k <= l {
				t.Errorf("consumer %d got p%d-%d after p%d-%d", c, r.producer, r.k, r.producer, l)
			}
			last[r.producer] = r.k
			bySeq[r.producer] = append(bySeq[r.producer], r)
		}
	}
	if len(seen) != producers*perProducer {
		t.Errorf("%d distinct items delivered, want %d", len(seen), producers*perProducer)
	}
	// Queue order (sequence numbers) matches each producer's order.
	for p, rs := range bySeq {
		slices.SortFunc(rs, func(a, b got) int { return int(a.seq - b.seq) })
		for i, r := range rs {
			if r.k != i {
				t.Fatalf("producer %d: item %d is at queue position %d", p, r.k, i)
			}
		}
	}
	counts := make([]int, consumers)
	for c := range results {
		counts[c] = len(results[c])
	}
	t.Logf("items per consumer: %v", counts)
}
