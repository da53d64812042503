package persistent_test

import (
	"context"
	"fmt"
	"log"

	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// A worker announces itself with a node that survives session expiry and
// deletion by others. Needs a ZooKeeper server, so it is not run by go
// test (lab/integration/persistent runs the same calls against one).
func ExampleNode() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	n, err := persistent.New(s, "/app/workers/worker-1", persistent.WithData([]byte("10.0.0.7:8080")))
	if err != nil { // checks its arguments, sends nothing
		log.Fatal(err)
	}
	if err := n.Start(ctx); err != nil { // 1 create + 1 exists; returns once the node exists
		log.Fatal(err)
	}
	defer n.Leave(ctx) // 1 exists + 1 delete (owner-checked); stops the goroutine

	// Serve while announced; the node comes back by itself after an
	// expiry, and Present() is a new context then.
	present := n.Present()
	select {
	case <-present.Done():
		fmt.Println("absent:", context.Cause(present)) // recipes.ErrNodeDeleted, ErrSessionLost, ...
	default:
		fmt.Println("present at", n.Path())
	}
}

// SetData changes the node's data now and for every later re-creation.
func ExampleNode_SetData() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	n, err := persistent.New(s, "/app/workers/worker-2")
	if err != nil {
		log.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer n.Leave(ctx)
	if err := n.SetData(ctx, []byte("draining")); err != nil { // 1 setData + 1 exists
		log.Fatal(err)
	}
}

// A protected-sequential node: a unique name per incarnation,
// "/app/tickets/_c_<uuid36>-ticket-<seq10>", as Curator's protected mode
// makes it.
func ExampleWithProtected() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	n, err := persistent.New(s, "/app/tickets/ticket-", persistent.WithProtected())
	if err != nil {
		log.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer n.Leave(ctx)    // 1 delete
	fmt.Println(n.Path()) // a new path after each re-creation
}

// New refuses bad input without sending anything.
func ExampleNew_badInput() {
	_, err := persistent.New(nil, "/app/x")
	fmt.Println(err)
	_, err = persistent.New(new(recipes.Session), "/zookeeper/x")
	fmt.Println(err)
	// Output:
	// persistent: recipes: nil session: recipes: bad argument
	// persistent: recipes: invalid path "/zookeeper/x": reserved /zookeeper tree
}
