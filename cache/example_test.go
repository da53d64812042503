package cache_test

import (
	"context"
	"log"

	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Keep a service's configuration subtree in memory and react to its
// changes. The examples that need a ZooKeeper server are compiled but not
// run by go test (lab/integration/cache runs its own against a real
// ensemble).
func ExampleTreeCache() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	c, err := cache.NewTreeCache(s, "/app/config", cache.WithMaxDepth(3)) // checks its arguments, sends nothing
	if err != nil {
		log.Fatal(err)
	}
	events := c.Watch(ctx) // 1 getData per node + 1 getChildren per node above the limit
	defer events.Stop()
	for ev := range events.C {
		switch ev.Type {
		case cache.EventInitialized:
			log.Printf("config loaded: %d nodes", len(c.Nodes()))
		case cache.EventAdded, cache.EventUpdated:
			log.Printf("%s = %q (version %d)", ev.Node.Path, ev.Node.Data, ev.Node.Stat.Version)
		case cache.EventRemoved:
			log.Printf("%s removed", ev.Node.Path)
		case cache.EventReset:
			log.Print("session lost: the view may be stale until the next EventInitialized")
		}
		if db, ok := c.Get("/app/config/db"); ok {
			_ = db.Data // the view: any goroutine, any time
		}
	}
	log.Print("cache stopped: ", events.Err()) // ctx's error, recipes.ErrClosed, ...
}

// Watch the members of a group: one node per member under a parent.
func ExampleChildrenCache() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	c, err := cache.NewChildrenCache(s, "/app/workers")
	if err != nil {
		log.Fatal(err)
	}
	events := c.Watch(ctx) // ends when ctx does
	go func() {
		for range events.C { // the cache waits for its reader: drain the stream
		}
	}()
	// ... later, from any goroutine:
	for _, w := range c.Current() {
		log.Printf("worker %s at %s", w.Path, w.Data)
	}
}

// Follow one node, a feature flag, whether or not it exists yet.
func ExampleNodeCache() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	c, err := cache.NewNodeCache(s, "/app/flags/new-ui")
	if err != nil {
		log.Fatal(err)
	}
	events := c.Watch(ctx)
	defer events.Stop()
	for ev := range events.C {
		n, ok := c.Current()
		log.Printf("%v: new-ui on = %v", ev.Type, ok && string(n.Data) == "on")
	}
}
