package partition_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/partition"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Two workers split four queues: each receives its share once both are
// members (a worker alone at first may receive everything, then release
// it when the other joins).
func ExamplePartitioner_Run() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	queues := []string{"q1", "q2", "q3", "q4"}
	shares := make(chan string, 2)
	var workers sync.WaitGroup
	for _, id := range []string{"worker-1", "worker-2"} {
		s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer s.Close()
		p, err := partition.New(s, "/examples/partition/queues", queues,
			partition.WithID(id), partition.WithBoundary(200*time.Millisecond))
		if err != nil {
			fmt.Println(err)
			return
		}
		st := p.Run(ctx)
		workers.Add(1)
		go func() {
			defer workers.Done()
			reported := false
			for part := range st.C {
				if len(part.Members()) == 2 && !reported { // the share among both
					shares <- fmt.Sprint(id, " ", part.Items())
					reported = true
				}
				<-part.Context().Done() // work until asked to release
				if err := part.Release(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, recipes.ErrReleased) {
					fmt.Println(err)
				}
			}
		}()
		defer st.Stop()
	}
	a, b := <-shares, <-shares
	if a > b {
		a, b = b, a
	}
	fmt.Println(a)
	fmt.Println(b)
	cancel() // both streams end; each worker releases what it holds
	workers.Wait()
	// Output:
	// worker-1 [q1 q3]
	// worker-2 [q2 q4]
}
