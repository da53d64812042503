package queue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// A producer and a consumer sharing a FIFO queue (Curator's
// SimpleDistributedQueue format). Needs a ZooKeeper server, so it is not
// run by go test.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	q, err := queue.New(s, "/app/jobs")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := q.Put(ctx, []byte("resize image 42")); err != nil {
		log.Fatal(err)
	}
	it, err := q.Take(ctx) // blocks until an item is there
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s\n", it.Name, it.Data)
}

// At-least-once processing: the item stays in the queue, held by an
// ephemeral claim node, until it is acknowledged. If this process dies, its
// session expires, the claim vanishes and another consumer gets the item.
func ExampleQueue_Claim() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	q, err := queue.New(s, "/app/jobs", queue.WithData([]byte("resizer-3"))) // shown in our claim nodes
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := q.Claim(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if err := process(c.Item().Data); err != nil {
			_ = c.Release(ctx) // someone else will try
			continue
		}
		if err := c.Ack(ctx); err != nil {
			log.Printf("not acknowledged (claim lost, the item will be delivered again): %v", err)
		}
	}
}

func process([]byte) error { return nil }

// A priority queue: lower priorities are taken first.
func ExampleQueue_PutPriority() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	q, err := queue.New(s, "/app/alerts", queue.WithPriority())
	if err != nil {
		log.Fatal(err)
	}
	_, _ = q.PutPriority(ctx, []byte("disk 80% full"), 500)
	_, _ = q.PutPriority(ctx, []byte("datacenter on fire"), 0)
	it, err := q.Take(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(it.Data)) // datacenter on fire
}

// Bad arguments are reported, not panicked on, by New, with sentinel
// errors for errors.Is; so is a nil receiver, by every method.
func ExampleNew_badInput() {
	ctx := context.Background()
	q, err := queue.New(nil, "/jobs")
	fmt.Println(errors.Is(err, recipes.ErrNilSession))
	_, err = q.Take(ctx)
	fmt.Println(errors.Is(err, queue.ErrNilQueue))
	// Output:
	// true
	// true
}
