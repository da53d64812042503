package shared_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/shared"
)

// Services share a limit that an operator changes at run time: each reads
// it, follows its changes, and raises it with a compare-and-set. The node
// is Curator's SharedCount, so Java services can share it. Needs a
// ZooKeeper server, so it is not run by go test.
func ExampleCount() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	limit, err := shared.NewCount(s, "/app/limit", 10) // 10 when the node is new
	if err != nil {
		log.Fatal(err)
	}
	// Raise the limit by one, retrying when another writer came first.
	cur, err := limit.Get(ctx) // 1 getData
	for err == nil {
		var ok bool
		if cur, ok, err = limit.TrySet(ctx, cur, cur.Value+1); ok { // 1 setData
			break
		}
	}
	if errors.Is(err, shared.ErrUncertain) {
		// The write may or may not have been applied: read again.
	} else if err != nil {
		log.Fatal(err)
	}
	// Follow the limit: the current value, then every change, never back.
	w := limit.Watch(ctx)
	defer w.Stop()
	for v := range w.C {
		fmt.Println("limit is now", v.Value)
	}
}

// A value written only by the lock's holder: the write commits only while
// the lock is held, however late it reaches ZooKeeper.
func ExampleValue_FencedTrySet() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	m, err := lock.New(s, "/app/config-lock")
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := shared.NewValue(s, "/app/config", []byte("{}"))
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Unlock(ctx)
	cur, err := cfg.Get(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, ok, err := cfg.FencedTrySet(ctx, m, cur, []byte(`{"mode":"fast"}`)) // 1 multi
	if errors.Is(err, recipes.ErrFenced) {
		log.Print("lost the lock before the write committed")
	}
	fmt.Println(ok, err)
}

// A counter of processed jobs shared with Java services (Curator's
// DistributedAtomicLong at the same path, promoted to the same lock).
func ExampleLong() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	jobs, err := shared.NewLong(s, "/app/jobs-done", shared.WithPromotion("/app/jobs-done-lock"))
	if err != nil {
		log.Fatal(err)
	}
	r, err := jobs.Increment(ctx) // 1 getData + 1 setData when uncontended
	switch {
	case errors.Is(err, shared.ErrUncertain):
		// The write may still be applied: do not count it again blindly.
	case err != nil:
		log.Fatal(err)
	case r.Succeeded:
		fmt.Println("jobs done:", r.Post)
	default:
		fmt.Println("too much contention, not counted; value was", r.Pre)
	}
}
