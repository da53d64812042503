package recipes_test

import (
	"context"
	"fmt"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func ExampleConnect() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), append(testutil.SessionOptions(), recipes.WithSessionTimeout(recipes.DefaultSessionTimeout))...)
	if err != nil {
		fmt.Println(err)
		return
	}
	sub := s.Subscribe()
	defer sub.Close()
	c, _ := sub.Next(ctx)
	fmt.Println("first state:", c.State, "session id known:", c.SessionID == s.ID())

	_ = s.Close()
	c, _ = sub.Next(ctx)
	fmt.Println("then:", c.State)
	// Output:
	// first state: connected session id known: true
	// then: closed
}

func ExampleAcquire() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	// Two of three contenders may hold at once.
	spec := recipes.Spec{Path: "/examples/pool", Role: recipes.RoleLease, Predicate: recipes.FirstN(2)}
	a, _ := recipes.Acquire(ctx, s, spec)
	b, _ := recipes.Acquire(ctx, s, spec)
	_, err = recipes.TryAcquire(ctx, s, spec)
	fmt.Println("third:", err)
	fmt.Println("tokens grow:", a.Fence().Token < b.Fence().Token)
	_ = a.Release(ctx)
	_ = b.Release(ctx)
	// Output:
	// third: recipes: would block
	// tokens grow: true
}
