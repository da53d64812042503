package lock_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func ExampleMutex() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	// Data the lock protects.
	_, _ = s.Conn().Create("/example-config", nil, 0, zk.WorldACL(zk.PermAll))

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
	a, _ := recipes.Connect(ctx, zkServers())
	b, _ := recipes.Connect(ctx, zkServers())
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
	s, err := recipes.Connect(ctx, zkServers())
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
	var leases []*lock.Lease
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

func ExampleRevoke() {
	ctx := context.Background()
	a, _ := recipes.Connect(ctx, zkServers())
	b, _ := recipes.Connect(ctx, zkServers())
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
