package queue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/go-zookeeper/zk"
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
	if _, err := q.Put(ctx, []byte("resize image 42")); err != nil { // 1 create
		log.Fatal(err)
	}
	it, err := q.Take(ctx) // blocks until an item is there; 1 getData + 1 delete per item
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
		c, err := q.Claim(ctx) // 1 create + 1 exists + 1 getData per item
		if err != nil {
			log.Fatal(err)
		}
		// c.Context() is done the moment the claim may be lost: stop then.
		if err := process(c.Context(), c.Item().Data); err != nil {
			_ = c.Release(ctx) // 1 delete; someone else will try
			continue
		}
		if err := c.Ack(ctx); err != nil { // 1 multi: the item and our claim, all or nothing
			log.Printf("not acknowledged (claim lost, the item will be delivered again): %v", err)
		}
	}
}

func process(ctx context.Context, _ []byte) error { return ctx.Err() }

// A claim is a recipes.Held: a result written to ZooKeeper with
// FencedMulti is rejected once the claim is no longer ours, so a consumer
// that lost its claim (the item goes to another) cannot write over the other
// consumer's result.
func ExampleClaim_FencedMulti() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	q, err := queue.New(s, "/app/jobs")
	if err != nil {
		log.Fatal(err)
	}
	c, err := q.Claim(ctx)
	if err != nil {
		log.Fatal(err)
	}
	held := c.Context()
	select {
	case <-held.Done():
		log.Print("claim lost: ", context.Cause(held)) // the item will be delivered again
		return
	default: // still ours: act
	}
	result := &zk.CreateRequest{Path: "/app/results/" + c.Item().Name, Data: []byte("ok"), Acl: zk.WorldACL(zk.PermAll)}
	_, err = c.FencedMulti(ctx, result) // 1 multi
	if errors.Is(err, recipes.ErrFenced) {
		log.Print("not written: the claim was lost") // the item will be delivered again
		return
	}
	if err != nil {
		log.Print(err)
		_ = c.Release(ctx) // give the item back
		return
	}
	fmt.Println("claim token", c.Fence().Token)
	if err := c.Ack(ctx); err != nil {
		log.Print(err)
	}
}

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
	fmt.Println(errors.Is(err, queue.ErrNilReceiver))
	// Output:
	// true
	// true
}
