package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// A coordinator holds workers at a barrier until the input is ready. Needs
// a ZooKeeper server, so it is not run by go test.
func ExampleBarrier() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	b, err := barrier.New(s, "/app/start")
	if err != nil {
		log.Fatal(err)
	}
	// Coordinator:
	if err := b.Set(ctx); err != nil { // 1 create
		log.Fatal(err)
	}
	// ... prepare the input, then release everyone:
	if err := b.Remove(ctx); err != nil { // 1 delete; wakes every waiter
		log.Fatal(err)
	}
	// Each worker:
	if err := b.Wait(ctx); err != nil { // 1 exists, +1 per watch event; returns once the node is gone
		log.Fatal(err)
	}
}

// Five workers start a round together and finish it together; the path and
// names are Curator's DistributedDoubleBarrier, so Java workers can join.
func ExampleDoubleBarrier() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	d, err := barrier.NewDouble(s, "/app/round", 5)
	if err != nil {
		log.Fatal(err)
	}
	if err := d.Enter(ctx); err != nil { // returns once 5 have entered; 1 exists + 1 create + 1 getChildren
		log.Fatal(err)
	}
	// ... compute ...
	if err := d.Leave(ctx); err != nil { // returns once all 5 have left
		log.Fatal(err)
	}
}

// Bad arguments are reported by New, with sentinel errors,
// and no Barrier is made.
func ExampleNew_badInput() {
	b, err := barrier.New(nil, "/app/start")
	fmt.Println(b == nil, errors.Is(err, recipes.ErrNilSession))
	// Output: true true
}

// Bad arguments are reported by the constructor, with sentinel errors,
// and no DoubleBarrier is made.
func ExampleNewDouble_badInput() {
	d, err := barrier.NewDouble(nil, "/app/round", 5)
	fmt.Println(d == nil, errors.Is(err, recipes.ErrNilSession))
	// Output: true true
}
