package ttl_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/ttl"
)

// Every replica of a service tries to run the nightly report; exactly one
// per day does, even if the one that runs it dies halfway. Needs a
// ZooKeeper server with extended types on, so it is not run by go test.
func ExampleOnce() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	day := time.Now().UTC().Format("2006-01-02")
	claim, won, err := ttl.Once(ctx, s, "/app/nightly-report/"+day, 36*time.Hour, []byte(recipes.ProcessID()))
	if err != nil {
		log.Fatal(err) // ttl.ErrUnsupported: enable zookeeper.extendedTypesEnabled
	}
	if !won {
		fmt.Printf("already run by %s at %v\n", claim.Data, claim.Created)
		return
	}
	// ... run the report
}
