package group_test

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func ExampleJoin() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	w := group.Watch(ctx, s, "/examples/group/workers")
	defer w.Stop()
	fmt.Println("members:", (<-w.C).IDs())

	for _, id := range []string{"worker-2", "worker-1"} {
		m, err := group.Join(ctx, s, "/examples/group/workers", id, group.WithData([]byte("addr of "+id)))
		if err != nil {
			fmt.Println(err)
			return
		}
		defer m.Leave(ctx)
	}
	snap, err := group.Members(ctx, s, "/examples/group/workers")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range snap {
		fmt.Printf("%s: %s\n", m.ID, m.Data)
	}
	for snap := range w.C { // coalesced: the newest membership
		if len(snap) == 2 {
			fmt.Println("watched:", snap.IDs())
			break
		}
	}
	// Output:
	// members: []
	// worker-1: addr of worker-1
	// worker-2: addr of worker-2
	// watched: [worker-1 worker-2]
}

func ExampleWithDialect() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	kazoo := group.WithDialect(recipes.Kazoo) // kazoo's Party layout
	m, err := group.Join(ctx, s, "/examples/group/party", "worker-1", kazoo)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Leave(ctx)
	snap, err := group.Members(ctx, s, "/examples/group/party", kazoo)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(snap.IDs(), len(m.Path()) == len("/examples/group/party/")+32+len("__party__"))
	// Output:
	// [worker-1] true
}
