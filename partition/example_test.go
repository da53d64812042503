package partition_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/partition"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Each worker process runs this: the queues are split among the workers
// alive, each queue consumed by one worker at a time. Needs a ZooKeeper
// server, so it is not run by go test (lab/integration/partition runs the
// same calls against one).
func ExamplePartitioner_Run() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	queues := []string{"q1", "q2", "q3", "q4"}
	p, err := partition.New(s, "/app/consumers", queues,
		partition.WithID("worker-1"), partition.WithBoundary(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	st := p.Run(ctx) // joins the group: 1 create + 1 exists
	defer st.Stop()
	for part := range st.C { // this worker's share, its locks held
		fmt.Println("consuming", part.Items(), "of", len(queues), "among", part.Members())
		consume(part) // returns once part.Context() is done
		// Stop first, then give the queues up: only now can another
		// worker take them (1 delete per queue).
		if err := part.Release(ctx); err != nil && !errors.Is(err, recipes.ErrReleased) {
			log.Print(err)
		}
	}
	log.Print(st.Err()) // why C closed
}

// consume works on the partition's items until its Context is done, with
// each write fenced by the item's lock (1 multi per write).
func consume(part *partition.Partition) {
	held := part.Context()
	for held.Err() == nil {
		for _, q := range part.Items() {
			offset := &zk.SetDataRequest{Path: "/app/offsets/" + q, Data: []byte("42"), Version: -1}
			if _, err := part.FencedMulti(held, q, offset); errors.Is(err, recipes.ErrFenced) {
				return // no longer ours: ZooKeeper refused the write
			}
		}
		select {
		case <-held.Done():
		case <-time.After(time.Second):
		}
	}
	// context.Cause(held): partition.ErrRebalance when the workers
	// changed, a loss (recipes.ErrSessionLost, ...) otherwise.
}

// Go workers beside kazoo's SetPartitioner on one path: the kazoo layout,
// and the same boundary as kazoo's time_boundary.
func ExampleWithDialect() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	p, err := partition.New(s, "/work_queues", []string{"queue-1", "queue-2", "queue-3"},
		partition.WithDialect(recipes.Kazoo), partition.WithID("go-worker"))
	if err != nil {
		log.Fatal(err)
	}
	st := p.Run(ctx)
	defer st.Stop()
	part := <-st.C
	fmt.Println(part.Items())
	_ = part.Release(ctx)
}
