package group_test

import (
	"context"
	"fmt"
	"log"

	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// A worker joins the group "/app/workers" under its id, with its address
// as payload (Curator's GroupMember layout), and leaves when done. Needs a
// ZooKeeper server, so it is not run by go test (lab/integration/group
// runs the same calls against one).
func ExampleJoin() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	m, err := group.Join(ctx, s, "/app/workers", "worker-1", group.WithData([]byte("10.0.0.7:8080")))
	if err != nil { // 1 create + 1 exists; listed from here on
		log.Fatal(err)
	}
	defer m.Leave(ctx) // 1 exists + 1 delete

	// The member node is kept through session loss; Present says when it
	// may be absent.
	if err := m.Update(ctx, []byte("10.0.0.7:9090")); err != nil { // 1 setData + 1 exists
		log.Fatal(err)
	}
}

// List the members once: 1 getChildren + 1 getData per member.
func ExampleMembers() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	members, err := group.Members(ctx, s, "/app/workers")
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range members { // sorted by id
		fmt.Printf("%s at %s (session 0x%x)\n", m.ID, m.Data, m.SessionID)
	}
}

// Follow the membership: a Snapshot now, then one per change, coalesced.
func ExampleWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	w := group.Watch(ctx, s, "/app/workers")
	defer w.Stop()
	for snap := range w.C {
		fmt.Println("members:", snap.IDs())
	}
	fmt.Println("closed:", w.Err()) // nil after Stop, ctx's error, or recipes.ErrClosed
}

// kazoo's Party layout: members "<uuid hex>__party__" whose data is the id.
func ExampleWithDialect() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	m, err := group.Join(ctx, s, "/app/party", "worker-1", group.WithDialect(recipes.Kazoo))
	if err != nil {
		log.Fatal(err)
	}
	defer m.Leave(ctx)
	members, err := group.Members(ctx, s, "/app/party", group.WithDialect(recipes.Kazoo))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(members.IDs()) // every Party member's identifier, kazoo's too
}

// Join refuses an id that is not one path segment, without sending
// anything.
func ExampleJoin_badInput() {
	_, err := group.Join(context.Background(), new(recipes.Session), "/app/workers", "a/b")
	fmt.Println(err)
	// Output:
	// group: invalid member id "a/b": not one path segment: recipes: invalid path
}
