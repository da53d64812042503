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
		p, err := twophase.NewSite(s, root, site, twophase.WithDeadline(time.Minute))
		if err != nil {
			log.Fatal(err) // a nil session, a bad root or site
		}
		go func() {
			stream := p.Run(ctx)
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
				// Applied: Finish, so that Run does not deliver it again.
				if err := prop.Finish(ctx); err != nil {
					log.Print(err)
				}
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

// The coordinator's side: begin a transaction among named sites, then wait
// for their votes and write the one decision. Needs a ZooKeeper server, so
// it is compiled but not run by go test.
func ExampleCoordinator() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	c, err := twophase.NewCoordinator(s, "/app/transfers", twophase.WithVoteTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	// 1 multi: the transaction and one node per site, all or nothing.
	tx, err := c.Begin(ctx, "transfer-42", []string{"bank-a", "bank-b"}, []byte(`{"amount":10}`))
	if err != nil {
		log.Fatal(err)
	}
	// Commit once every site voted commit; Abort at the first abort vote, a
	// site gone before voting, or the vote timeout. If ctx ends first the
	// transaction stays open: Decide again, or Abort.
	d, err := tx.Decide(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tx.ID(), d)
}

// A site's side: every transaction that names it and that it has not
// finished, including those begun while it was away; vote once prepared,
// await the decision, apply it, Finish.
func ExampleSite() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	p, err := twophase.NewSite(s, "/app/transfers", "bank-a", twophase.WithDeadline(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	txs := p.Run(ctx)
	defer txs.Stop()
	for prop := range txs.C {
		if prop.Voted() == 0 && prop.Decision() == 0 {
			vote := twophase.Commit
			if err := prepare(prop.Payload()); err != nil {
				vote = twophase.Abort
			}
			if err := prop.Vote(ctx, vote); err != nil { // 1 create
				log.Print(err)
				continue
			}
		}
		d, err := prop.Await(ctx) // Abort by itself once WithDeadline passes undecided
		if err != nil {
			log.Print(err)
			continue
		}
		// Apply idempotently: a restart delivers it again until Finish.
		fmt.Println(prop.TxID(), "applies", d)
		if err := prop.Finish(ctx); err != nil { // 1 multi + 1 exists + 1 delete
			log.Print(err)
		}
	}
	log.Print("stream ended: ", txs.Err()) // ctx's error, or the session closed
}

func prepare([]byte) error { return nil }

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
// and returns no Site.
func ExampleNewSite_invalid() {
	p, err := twophase.NewSite(nil, "/app/transfers", "bank-a")
	fmt.Println(p == nil, err)
	// Output: true twophase: recipes: nil session: recipes: bad argument
}
