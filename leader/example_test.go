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

// Campaign, lead only while the term lasts, fence the writes that must be
// rejected from a stale leader, resign (Release). Needs a ZooKeeper server,
// so it is compiled but not run by go test.
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
	term, err := e.Campaign(ctx) // uncontended: 1 create + 1 getChildren + 1 exists (+1 getData in the background)
	if err != nil {
		log.Fatal(err)
	}
	defer term.Release(ctx) // 1 delete; wakes exactly the participant behind us

	led := term.Context() // done the moment leadership may be lost
	for round := range 3 {
		select {
		case <-led.Done():
			log.Print("no longer leader: ", context.Cause(led))
			return
		case <-time.After(time.Second):
		}
		// Guard shared writes with the term's fence: ZooKeeper rejects them
		// once our node is gone, even if this process has not noticed yet.
		data := []byte(fmt.Sprintf("round %d by token %d", round, term.Fence().Token))
		_, err = term.FencedMulti(ctx, &zk.SetDataRequest{Path: "/services/billing/state", Data: data, Version: -1})
		if errors.Is(err, recipes.ErrFenced) {
			log.Print("not written: leadership was lost")
			return
		}
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
				// The term's fence guards shared writes.
				term := leader.TermOf(ctx)
				_, err := term.FencedMulti(ctx, &zk.SetDataRequest{Path: "/jobs/compactor/last", Data: []byte(term.Participant().ID), Version: -1})
				if err != nil {
					return err // Run logs it (see WithErrorHandler), backs off and campaigns again
				}
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
func ExampleElection_Watch() {
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
	obs := e.Watch(ctx) // 1 getChildren + 1 getData per change, watching the head node only
	defer obs.Stop()    // a reader that returns early leaves no goroutine behind
	for p := range obs.C {
		if p.IsZero() {
			fmt.Println("nobody leads")
			continue
		}
		fmt.Println("leader is", p.ID)
	}
	log.Print("observe ended: ", obs.Err()) // ctx's error here, or the session closed
}

// One look at who leads, without campaigning (Watch follows every change).
func ExampleElection_Leader() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	e, err := leader.New(s, "/services/billing/leader")
	if err != nil {
		log.Fatal(err)
	}
	p, err := e.Leader(ctx) // 1 getChildren + 1 getData
	switch {
	case errors.Is(err, leader.ErrNoLeader):
		fmt.Println("nobody campaigns")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("leader is", p.ID, "with token", p.Token)
	}
}

// Bad arguments are reported by New, with sentinel errors, and no Election
// is made.
func ExampleNew_badInput() {
	e, err := leader.New(nil, "/services/billing/leader")
	fmt.Println(e == nil, errors.Is(err, recipes.ErrNilSession))
	// Output: true true
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
