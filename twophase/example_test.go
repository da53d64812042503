package twophase_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// A coordinator and two sites commit one transaction. (Needs a ZooKeeper
// server at 127.0.0.1:2181; not run as a test.)
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	const root = "/app/transfers"
	for _, site := range []string{"bank-a", "bank-b"} {
		p, err := twophase.NewParticipant(s, root, site, twophase.WithDeadline(time.Minute))
		if err != nil {
			log.Fatal(err) // a nil session, a bad root or site
		}
		go func() {
			stream := p.Transactions(ctx)
			for prop := range stream.C {
				// Prepare the local change described by prop.Payload(), then:
				if err := prop.Vote(ctx, twophase.Commit); err != nil {
					log.Print(err)
					continue
				}
				d, err := prop.Await(ctx)
				if err != nil {
					log.Print(err)
					continue
				}
				fmt.Println(site, "applies", d) // commit or roll back the prepared change
			}
			log.Print(site, ": stream ended: ", stream.Err()) // ctx's error, or the session closed
		}()
	}

	// WithDeadline here, or WithVoteTimeout above, would not compile.
	c, err := twophase.NewCoordinator(s, root, twophase.WithVoteTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	tx, err := c.Begin(ctx, "transfer-42", []string{"bank-a", "bank-b"}, []byte(`{"amount":10}`))
	if err != nil {
		log.Fatal(err)
	}
	d, err := tx.Decide(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("decision:", d)
}

// A restarted coordinator finishes what its predecessor left open.
func ExampleCoordinator_Resume() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	c, err := twophase.NewCoordinator(s, "/app/transfers")
	if err != nil {
		log.Fatal(err)
	}
	open, err := c.Pending(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, id := range open {
		tx, err := c.Resume(ctx, id)
		if err != nil {
			log.Print(err)
			continue
		}
		d, err := tx.Decide(ctx)
		fmt.Println(id, d, err)
	}
}

// Collect, run periodically, deletes transactions decided more than the
// retention period ago.
func ExampleCoordinator_Collect() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	c, err := twophase.NewCoordinator(s, "/app/transfers", twophase.WithRetention(time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	n, err := c.Collect(ctx)
	fmt.Println(n, err)
}

func ExampleDecision_String() {
	fmt.Println(twophase.Commit, twophase.Abort)
	// Output: commit abort
}

// Invalid arguments are reported by the constructor, which sends nothing
// and returns no Participant.
func ExampleNewParticipant_invalid() {
	p, err := twophase.NewParticipant(nil, "/app/transfers", "bank-a")
	fmt.Println(p == nil, err)
	// Output: true twophase: recipes: nil session
}
