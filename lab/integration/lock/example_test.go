package lock_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	sharedrecipe "github.com/zkrecipes/zkrecipes/shared"
)

func ExampleMutex() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	// Data the lock protects.
	_, _ = s.Conn().Create("/example-config", nil, 0, s.ACLFor("/example-config"))

	m, err := lock.New(s, "/examples/mutex") // checks its arguments, sends nothing
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	held := m.Context() // cancelled the moment the lock may be lost
	// A fenced write: ZooKeeper rejects it if this holding is gone.
	_, err = m.FencedMulti(ctx, &zk.SetDataRequest{Path: "/example-config", Data: []byte("v2"), Version: -1})
	fmt.Println("held:", held.Err() == nil, "fenced write:", err)

	if err := m.Unlock(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println("after Unlock:", context.Cause(held))
	// Output:
	// held: true fenced write: <nil>
	// after Unlock: recipes: released
}

func ExampleMutex_TryLock() {
	ctx := context.Background()
	a, _ := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	b, _ := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	defer a.Close()
	defer b.Close()

	first, _ := lock.New(a, "/examples/trylock")
	second, _ := lock.New(b, "/examples/trylock")
	fmt.Println("first:", first.TryLock(ctx))
	fmt.Println("second:", second.TryLock(ctx))
	_ = first.Unlock(ctx)
	fmt.Println("second again:", second.TryLock(ctx))
	_ = second.Unlock(ctx)
	// Output:
	// first: <nil>
	// second: lock: locked: /examples/trylock
	// second again: <nil>
}

func ExampleSemaphore() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	sem, err := lock.NewSemaphore(s, "/examples/semaphore", 2) // Curator InterProcessSemaphoreV2 layout
	if err != nil {
		fmt.Println(err)
		return
	}
	var leases []*lock.Permit
	for range 2 {
		l, err := sem.Acquire(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		leases = append(leases, l)
	}
	children, _, _ := s.Conn().Children("/examples/semaphore/leases")
	fmt.Println("leases held:", len(children))

	// A third Acquire would wait; with a deadline it gives up cleanly.
	short, cancel := context.WithCancel(ctx)
	cancel()
	_, err = sem.Acquire(short)
	fmt.Println("third gave up:", errors.Is(err, context.Canceled))

	for _, l := range leases {
		_ = l.Release(ctx)
	}
	children, _, _ = s.Conn().Children("/examples/semaphore/leases")
	fmt.Println("leases after release:", len(children))
	// Output:
	// leases held: 2
	// third gave up: true
	// leases after release: 0
}

func ExampleSemaphore_TryAcquire() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	sem, _ := lock.NewSemaphore(s, "/examples/try-semaphore", 1)
	l, err := sem.TryAcquire(ctx) // a free lease
	fmt.Println("first:", err)
	_, err = sem.TryAcquire(ctx) // full: 1 getChildren, nothing written
	fmt.Println("second:", errors.Is(err, lock.ErrNoPermit))
	_ = l.Release(ctx)
	// Output:
	// first: <nil>
	// second: true
}

func ExampleSemaphore_AcquireN() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	sem, _ := lock.NewSemaphore(s, "/examples/n-semaphore", 3)
	ls, err := sem.AcquireN(ctx, 2) // both or none
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("leases:", len(ls))
	_, err = sem.TryAcquireN(ctx, 2) // 2 held of 3: not 2 more
	fmt.Println("2 more:", errors.Is(err, lock.ErrNoPermit))
	_ = ls[0].Release(ctx)  // one by one...
	_ = ls[1:].Release(ctx) // ...or together
	ps, _ := sem.Participants(ctx)
	fmt.Println("left:", len(ps))
	// Output:
	// leases: 2
	// 2 more: true
	// left: 0
}

func ExampleNewSemaphoreCount() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	// The maximum lives in a shared count (Curator's SharedCount layout),
	// which any process may change.
	max, err := sharedrecipe.NewCount(s, "/examples/pool-max", 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	sem, err := lock.NewSemaphoreCount(s, "/examples/pool", max)
	if err != nil {
		fmt.Println(err)
		return
	}
	first, err := sem.Acquire(ctx) // 6 requests: 1 getData of the count besides a lease's 5
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = sem.TryAcquire(ctx)
	fmt.Println("second at max 1:", errors.Is(err, lock.ErrNoPermit))

	if _, err := max.Set(ctx, 2); err != nil { // honoured by the next decision
		fmt.Println(err)
		return
	}
	second, err := sem.TryAcquire(ctx)
	fmt.Println("second at max 2:", err)
	if _, err := max.Set(ctx, 1); err != nil { // nobody is revoked...
		fmt.Println(err)
		return
	}
	fmt.Println("still held:", first.Context().Err() == nil && second.Context().Err() == nil)
	_, err = sem.TryAcquire(ctx) // ...but nobody gets in
	fmt.Println("third at max 1:", errors.Is(err, lock.ErrNoPermit))
	_ = first.Release(ctx)
	_ = second.Release(ctx)
	// Output:
	// second at max 1: true
	// second at max 2: <nil>
	// still held: true
	// third at max 1: true
}

func ExampleSemaphore_Participants() {
	ctx := context.Background()
	a, _ := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	b, _ := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	defer a.Close()
	defer b.Close()

	web, _ := lock.NewSemaphore(a, "/examples/participants", 2, lock.WithData([]byte("web-1")))
	batch, _ := lock.NewSemaphore(b, "/examples/participants", 2, lock.WithData([]byte("batch-7")))
	l1, _ := web.Acquire(ctx)
	l2, _ := batch.Acquire(ctx)
	ps, _ := web.Participants(ctx) // in lease order, with each holder's data
	for _, p := range ps {
		fmt.Println(string(p.Data), p.Node == l1.Node() || p.Node == l2.Node())
	}
	_ = l1.Release(ctx)
	_ = l2.Release(ctx)
	// Output:
	// web-1 true
	// batch-7 true
}

func ExampleRevoke() {
	ctx := context.Background()
	a, _ := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	b, _ := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	defer a.Close()
	defer b.Close()

	holder, _ := lock.New(a, "/examples/revocable", lock.WithRevocation())
	if err := holder.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	other, _ := lock.New(b, "/examples/revocable")
	ps, _ := other.Participants(ctx)
	_ = lock.Revoke(ctx, b, ps[0].Node) // ask the holder to release
	<-holder.Revoked()
	fmt.Println("holder asked to release:", context.Cause(holder.Context()) != nil)
	_ = holder.Unlock(ctx)
	// Output:
	// holder asked to release: true
}
