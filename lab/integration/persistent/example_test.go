package persistent_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/recipes"
)

func ExampleNode() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	other, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer other.Close()

	n, err := persistent.New(s, "/examples/persistent/worker-1", persistent.WithData([]byte("10.0.0.7:8080")))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := n.Start(ctx); err != nil { // returns once the node exists
		fmt.Println(err)
		return
	}
	present := n.Present()
	fmt.Println("present:", present.Err() == nil, n.Path())

	// Someone deletes it: Present is done, and the node comes back.
	if err := other.Conn().Delete(n.Path(), -1); err != nil {
		fmt.Println(err)
		return
	}
	<-present.Done()
	fmt.Println("cause:", errors.Is(context.Cause(present), recipes.ErrNodeDeleted))
	for n.Present() == present { // a new context once it is back
		time.Sleep(10 * time.Millisecond)
	}
	data, _, _ := other.Conn().Get(n.Path())
	fmt.Println("back with:", string(data))

	if err := n.Leave(ctx); err != nil { // deletes it; Present is done
		fmt.Println(err)
	}
	fmt.Println("after Leave:", context.Cause(n.Present()))
	// Output:
	// present: true /examples/persistent/worker-1
	// cause: true
	// back with: 10.0.0.7:8080
	// after Leave: recipes: released: /examples/persistent/worker-1
}
