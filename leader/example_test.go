package leader_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Campaign, lead while the term lasts, resign (Release).
func ExampleElection_Campaign() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"}, recipes.WithSessionTimeout(4*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	e, err := leader.New(s, "/services/billing/leader", leader.WithData([]byte("billing-7")))
	if err != nil {
		log.Fatal(err) // a nil session, a bad path, an id too large
	}
	term, err := e.Campaign(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer term.Release(ctx)
	// Lead until the term ends; guard shared writes with the fence so that
	// ZooKeeper rejects them once leadership is gone.
	_, err = term.FencedMulti(term.Context(), &zk.SetDataRequest{Path: "/services/billing/state", Data: []byte("v2"), Version: -1})
	if errors.Is(err, recipes.ErrFenced) {
		log.Print("no longer leader: ", context.Cause(term.Context()))
	}
}

// The selector loop: lead, hand over, requeue, until ctx ends.
func ExampleRun() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	e, err := leader.New(s, "/jobs/compactor/leader")
	if err != nil {
		log.Fatal(err)
	}
	err = leader.Run(ctx, e, func(ctx context.Context) error {
		// Work as leader; ctx is done the moment leadership may be lost.
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
				fmt.Println("compacting as", leader.TermOf(ctx).Participant().ID)
			}
		}
	})
	log.Print("run ended: ", err)
}

// Run a job once, as leader (elastic-job's executeInLeader).
func ExampleDo() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	err = leader.Do(ctx, s, "/jobs/migrate/leader", func(ctx context.Context) error {
		fmt.Println("migrating")
		return nil
	})
	if errors.Is(err, leader.ErrLost) {
		log.Print("leadership was lost while migrating; check the result")
	}
}

// Follow the leader without campaigning.
func ExampleElection_Observe() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	e, err := leader.New(s, "/services/billing/leader")
	if err != nil {
		log.Fatal(err)
	}
	obs := e.Observe(ctx)
	defer obs.Stop() // a reader that returns early leaves no goroutine behind
	for p := range obs.C {
		if p.IsZero() {
			fmt.Println("nobody leads")
			continue
		}
		fmt.Println("leader is", p.ID)
	}
	log.Print("observe ended: ", obs.Err()) // ctx's error here, or the session closed
}

// Lifecycle events, delivered in order without ever blocking the election.
func ExampleWithEvents() {
	hook := func(ev leader.Event) {
		fmt.Println(ev.Type, ev.Node)
	}
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	e, err := leader.New(s, "/services/billing/leader", leader.WithEvents(hook))
	if err != nil {
		log.Fatal(err)
	}
	if term, err := e.Campaign(ctx); err == nil {
		term.Release(ctx)
	}
}

// The lifecycle events are named after ZooKeeper's LeaderElectionSupport.
func ExampleEventType() {
	for t := leader.EventStart; t <= leader.EventStopComplete; t++ {
		fmt.Print(t, " ")
	}
	fmt.Println()
	// Output: start offer-start offer-complete determine-start determine-complete elected-start elected-complete ready-start ready-complete failed stop-start stop-complete
}
