package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Connect one Session per process and close it when done: closing ends the
// ZooKeeper session, which deletes every ephemeral node it created. Needs a
// ZooKeeper server, so it is compiled but not run by go test.
func ExampleConnect() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := recipes.Connect(ctx, []string{"zk1:2181", "zk2:2181", "zk3:2181"},
		recipes.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err) // ctx ended first, or ErrBadArgument for a bad server list
	}
	defer s.Close() // an io.Closer: waits at most the session timeout

	fmt.Println(s.State(), s.NegotiatedTimeout())
}

// CloseContext bounds the wait for the teardown with a ctx of one's own.
func ExampleSession_CloseContext() {
	s, err := recipes.Connect(context.Background(), []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.CloseContext(ctx); err != nil {
		log.Print("teardown goes on in the background: ", err)
	}
}

// Acquire is the core every lock and election is built on: hold, act only
// while the holding's Context is not done, fence writes to ZooKeeper, release.
// Needs a ZooKeeper server.
func ExampleAcquire() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	// A mutex in Curator's wire format (the zero Spec fields' defaults).
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: "/app/locks/report"})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release(ctx)

	held := h.Context() // done the moment the holding may be lost
	for step := range 3 {
		select {
		case <-held.Done():
			log.Print("stopped: ", context.Cause(held)) // ErrSuspended, ErrSessionLost, ...
			return
		default: // still held: act
		}
		fmt.Println("step", step, "under token", h.Fence().Token)
	}
	// ZooKeeper itself rejects this write if the holding is gone.
	_, err = h.FencedMulti(ctx, &zk.SetDataRequest{Path: "/app/report", Data: []byte("done"), Version: -1})
	if errors.Is(err, recipes.ErrFenced) {
		log.Print("a stale holder: the write was rejected")
	}
}

// Code that only needs to know whether it still holds, to fence its writes
// and to give the holding up can take a recipes.Held: a *recipes.Holding,
// a *lock.Permit, a *leader.Term or a *queue.Claim. Needs a ZooKeeper server.
func ExampleHeld() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: "/app/locks/publish"})
	if err != nil {
		log.Fatal(err)
	}
	if err := publish(ctx, h, []byte("v3")); err != nil {
		log.Print(err)
	}
}

// publish writes data while h holds, then releases h.
func publish(ctx context.Context, h recipes.Held, data []byte) error {
	defer h.Release(ctx)
	if err := h.Context().Err(); err != nil {
		return context.Cause(h.Context())
	}
	_, err := h.FencedMulti(ctx, &zk.SetDataRequest{Path: "/app/published", Data: data, Version: -1})
	return err
}

// A Stream carries the values a recipe produces on its own goroutines
// (leader.Election.Watch, twophase.Site.Run); Err says why
// C closed.
func ExampleStartStream() {
	ctx := context.Background()
	st := recipes.StartStream(ctx, func(ctx context.Context, out chan<- int) error {
		for i := range 3 {
			select {
			case out <- i:
			case <-ctx.Done():
				return nil
			}
		}
		return errors.New("no more")
	})
	for v := range st.C {
		fmt.Println(v)
	}
	fmt.Println("closed:", st.Err())
	// Output:
	// 0
	// 1
	// 2
	// closed: no more
}

// A reader that stops early calls Stop: the producer gives up its send and
// returns, and Err is nil.
func ExampleStream_Stop() {
	st := recipes.StartStream(context.Background(), func(ctx context.Context, out chan<- int) error {
		for i := 0; ; i++ {
			select {
			case out <- i:
			case <-ctx.Done():
				return nil
			}
		}
	})
	fmt.Println(<-st.C)
	st.Stop()
	for range st.C { // drain until the producer has returned
	}
	fmt.Println("err:", st.Err())
	// Output:
	// 0
	// err: <nil>
}

// Every error a recipe returns because its ctx ended matches both ctx.Err()
// and the caller's cause.
func ExampleContextError() {
	errShutdown := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	fmt.Println(recipes.ContextError(ctx))
	cancel(errShutdown)
	err := recipes.ContextError(ctx)
	fmt.Println(errors.Is(err, context.Canceled), errors.Is(err, errShutdown))
	// Output:
	// <nil>
	// true true
}

func ExampleValidatePath() {
	for _, p := range []string{"/app/locks/a", "app/locks", "/app//locks", "/app/"} {
		fmt.Println(p, recipes.ValidatePath(p) == nil)
	}
	err := recipes.ValidateWritePath("/zookeeper/quota")
	fmt.Println(errors.Is(err, recipes.ErrInvalidPath))
	// Output:
	// /app/locks/a true
	// app/locks false
	// /app//locks false
	// /app/ false
	// true
}

// The dialects are wire formats shared with other clients; String names the
// family, and every recipe package takes one through its WithDialect option.
func ExampleDialect() {
	fmt.Println(recipes.Curator, recipes.CuratorSelector, recipes.Kazoo)
	fmt.Println(recipes.Curator.ElectionRole(), recipes.CuratorSelector.ElectionRole())
	fmt.Println(recipes.Curator.OrdersAsText(), recipes.Curator.TextOrder().OrdersAsText())
	prefix, ranked := recipes.Kazoo.QueueItem()
	fmt.Println(prefix, ranked)
	// Output:
	// curator curator kazoo
	// latch lock
	// false true
	// entry- true
}

// A Fence's token is the czxid of the holding's node: it only grows from
// holder to holder, so storage outside ZooKeeper can refuse a stale one.
// The zero Fence belongs to no holding.
func ExampleFence() {
	older := recipes.Fence{Token: 0x100000004, Path: "/app/lock/_c_a-lock-0000000001", SessionID: 1}
	newer := recipes.Fence{Token: 0x100000009, Path: "/app/lock/_c_b-lock-0000000002", SessionID: 2}
	fmt.Println(older.Token < newer.Token, newer.Valid(), recipes.Fence{}.Valid())
	fmt.Println(newer.Check().Path, newer.Check().Version)
	// Output:
	// true true false
	// /app/lock/_c_b-lock-0000000002 0
}

// Sequence numbers wrap after 2^31 creates under one parent; SortBySeq's
// serial arithmetic keeps the queue order across the wrap.
func ExampleSortBySeq() {
	last, _ := recipes.Curator.Parse("_c_9a2f0c4e-8d1b-4f5a-9c3e-2b7d6e1f0a4c-lock-2147483647")
	next, _ := recipes.Curator.Parse("_c_0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e-lock--2147483648")
	cs := []recipes.Contender{next, last}
	recipes.SortBySeq(cs, last.Seq)
	fmt.Println(last.Seq < next.Seq, cs[0].Seq, cs[1].Seq)
	// Output: false 2147483647 -2147483648
}
