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
		p := twophase.NewParticipant(s, root, site)
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

	c := twophase.NewCoordinator(s, root, twophase.WithVoteTimeout(10*time.Second))
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
	c := twophase.NewCoordinator(s, "/app/transfers")
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
	c := twophase.NewCoordinator(s, "/app/transfers", twophase.WithRetention(time.Hour))
	n, err := c.Collect(ctx)
	fmt.Println(n, err)
}

func ExampleDecision_String() {
	fmt.Println(twophase.Commit, twophase.Abort)
	// Output: commit abort
}

// Invalid arguments are reported by Err (and by every call) before
// anything is sent.
func ExampleNewParticipant_invalid() {
	p := twophase.NewParticipant(nil, "/app/transfers", "decision")
	fmt.Println(p.Err())
	// Output: twophase: recipes: nil session
}
