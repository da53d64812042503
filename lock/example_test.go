package lock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/shared"
)

// Lock, act only while the lock is held, fence the writes that must be
// rejected from a stale holder, unlock. The examples that need a ZooKeeper
// server are compiled but not run by go test (lab/integration/lock runs its
// own against a real ensemble).
func ExampleMutex() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	m, err := lock.New(s, "/app/locks/report") // checks its arguments, sends nothing
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil { // uncontended: 1 create + 1 getChildren
		log.Fatal(err)
	}
	defer m.Unlock(ctx) // 1 delete; wakes the one waiter behind us

	held := m.Context() // done the moment the lock may be lost
	for part := range 3 {
		select {
		case <-held.Done():
			log.Print("lock lost: ", context.Cause(held)) // recipes.ErrSuspended, ErrSessionLost, ...
			return
		default: // still held: act
		}
		fmt.Println("rendering part", part)
	}
	// Storage outside ZooKeeper can keep the largest token it has seen.
	fmt.Println("token", m.Fence().Token)
	// A write to ZooKeeper guarded by our node's version: rejected once the
	// holding is gone, even if this process has not noticed yet.
	_, err = m.FencedMulti(ctx, &zk.SetDataRequest{Path: "/app/report", Data: []byte("v2"), Version: -1})
	if errors.Is(err, recipes.ErrFenced) {
		log.Print("not written: the lock was lost")
	}
}

// TryLock takes the lock only if nobody holds or waits for it.
func ExampleMutex_TryLock() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	m, err := lock.New(s, "/app/locks/cron")
	if err != nil {
		log.Fatal(err)
	}
	switch err := m.TryLock(ctx); {
	case errors.Is(err, lock.ErrLocked):
		fmt.Println("another instance runs the job") // 1 getChildren, nothing written
	case err != nil:
		log.Fatal(err)
	default:
		defer m.Unlock(ctx)
		fmt.Println("running the job")
	}
}

// At most n holders at once, in Curator's InterProcessSemaphoreV2 layout.
func ExampleSemaphore() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	sem, err := lock.NewSemaphore(s, "/app/pools/db", 3)
	if err != nil {
		log.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l, err := sem.Acquire(wait) // a free permit: 5 requests
	if err != nil {
		log.Fatal(err) // ctx's error if no permit came in time
	}
	defer l.Release(ctx) // 1 delete; wakes the one acquirer waiting

	if err := query(l.Context()); err != nil { // stops the moment the permit may be lost
		log.Print(err)
	}
	_, err = l.FencedMulti(ctx, &zk.SetDataRequest{Path: "/app/pools/db-stats", Data: []byte("1 query"), Version: -1})
	if errors.Is(err, recipes.ErrFenced) {
		log.Print("not written: the lease was lost")
	}
}

func query(ctx context.Context) error { return ctx.Err() }

// A pool whose size operators change at run time: the maximum is a shared
// count (Curator's SharedCount layout, so a Java service using Curator's
// InterProcessSemaphoreV2 with a SharedCountReader shares it).
func ExampleNewSemaphoreCount() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	size, err := shared.NewCount(s, "/app/pools/db-size", 3) // created with 3 if missing
	if err != nil {
		log.Fatal(err)
	}
	sem, err := lock.NewSemaphoreCount(s, "/app/pools/db", size)
	if err != nil {
		log.Fatal(err)
	}
	l, err := sem.Acquire(ctx) // a free permit: 6 requests (the count is read fresh)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
	// Elsewhere, an operator shrinks the pool: holders keep their permits,
	// new ones wait until fewer than 2 are held.
	if _, err := size.Set(ctx, 2); err != nil {
		log.Print(err)
	}
	if err := query(l.Context()); err != nil {
		log.Print(err)
	}
}

// Several permits at once, all or nothing; a try that costs no write when
// they are not free.
func ExampleSemaphore_AcquireN() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	sem, err := lock.NewSemaphore(s, "/app/pools/db", 10) // every peer must say 10: ErrMaxMismatch otherwise
	if err != nil {
		log.Fatal(err)
	}
	ls, err := sem.TryAcquireN(ctx, 4) // 1 getChildren and nothing written when 4 are not free
	if errors.Is(err, lock.ErrNoPermit) {
		fmt.Println("busy, try later")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer ls.Release(ctx) // every permit; each can also be released alone
	ps, err := sem.Participants(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range ps {
		fmt.Printf("%s held by %s\n", p.Node, p.Data)
	}
}

// Revocation (Curator's protocol): another process asks the holder to
// release; a holder made WithRevocation sees Revoked closed and its Context
// cancelled with recipes.ErrRevoked.
func ExampleRevoke() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	// The holder: +1 getData per acquisition to watch for the request.
	holder, err := lock.New(s, "/app/locks/report", lock.WithRevocation())
	if err != nil {
		log.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		<-holder.Revoked() // asked to release: finish up, then let go
		_ = holder.Unlock(ctx)
	}()

	// Anyone else (another process, in practice): list, then revoke the first.
	other, err := lock.New(s, "/app/locks/report")
	if err != nil {
		log.Fatal(err)
	}
	ps, err := other.Participants(ctx) // the holder first
	if err != nil || len(ps) == 0 {
		log.Fatal("nobody holds: ", err)
	}
	if err := lock.Revoke(ctx, s, ps[0].Node); err != nil { // 1 setData
		log.Fatal(err)
	}
	<-released
}

// Bad arguments are reported by the constructors, with sentinel errors, and
// no value is made.
func ExampleNew_badInput() {
	m, err := lock.New(nil, "/app/locks/report")
	fmt.Println(m == nil, errors.Is(err, recipes.ErrNilSession))
	sem, err := lock.NewSemaphore(nil, "/app/pools/db", 3)
	fmt.Println(sem == nil, errors.Is(err, recipes.ErrNilSession))
	// Output:
	// true true
	// true true
}

// Move money between two accounts while holding both accounts' locks; a
// second transfer naming them in the other order waits instead of
// deadlocking. Needs a ZooKeeper server, so it is not run by go test.
func ExampleMultiMutex() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	m, err := lock.NewMulti(s, []string{"/accounts/bob/lock", "/accounts/alice/lock"})
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil { // alice's lock, then bob's
		log.Fatal(err)
	}
	defer m.Unlock(ctx)
	// One multi that ZooKeeper rejects unless both locks are still held.
	_, err = m.FencedMulti(ctx,
		&zk.SetDataRequest{Path: "/accounts/alice/balance", Data: []byte("90"), Version: -1},
		&zk.SetDataRequest{Path: "/accounts/bob/balance", Data: []byte("110"), Version: -1})
	if errors.Is(err, recipes.ErrFenced) {
		log.Print("lost a lock: transfer not applied")
	}
}
