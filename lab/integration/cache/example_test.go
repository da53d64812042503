package cache_test

import (
	"context"
	"fmt"
	"path"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// cleanup deletes p and its subtree, so that an Example can run again.
func cleanup(conn *zk.Conn, p string) {
	kids, _, _ := conn.Children(p)
	for _, k := range kids {
		cleanup(conn, path.Join(p, k))
	}
	_ = conn.Delete(p, -1)
}

// ensure creates p and its missing parents, with the Session's ACL.
func ensure(s *recipes.Session, p string) {
	if p == "/" {
		return
	}
	ensure(s, path.Dir(p))
	_, _ = s.Conn().Create(p, nil, 0, s.ACLFor(p))
}

func ExampleNodeCache() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	p := "/examples/cache/node/feature-flag"
	cleanup(s.Conn(), p)
	ensure(s, path.Dir(p))

	c, err := cache.NewNodeCache(s, p) // checks its arguments, sends nothing
	if err != nil {
		fmt.Println(err)
		return
	}
	events := c.Watch(ctx) // 1 getData (+ 1 exists: the node is missing)
	defer events.Stop()
	show := func() {
		ev := <-events.C
		fmt.Println(ev.Type, string(ev.Node.Data))
	}
	fmt.Println((<-events.C).Type) // the node is missing: nothing to add

	acl := s.ACLFor(p)
	_, _ = s.Conn().Create(p, []byte("off"), 0, acl)
	show()
	_, _ = s.Conn().Set(p, []byte("on"), -1)
	show()
	n, ok := c.Current() // the view includes every event received
	fmt.Println("current:", string(n.Data), ok)
	_ = s.Conn().Delete(p, -1)
	show()
	_, ok = c.Current()
	fmt.Println("cached:", ok)
	// Output:
	// initialized
	// added off
	// updated on
	// current: on true
	// removed on
	// cached: false
}

func ExampleChildrenCache() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	p := "/examples/cache/children/workers"
	cleanup(s.Conn(), p)
	ensure(s, p)
	acl := s.ACLFor(p)
	_, _ = s.Conn().Create(p+"/w1", []byte("10.0.0.1"), 0, acl)
	_, _ = s.Conn().Create(p+"/w2", []byte("10.0.0.2"), 0, acl)

	c, err := cache.NewChildrenCache(s, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	events := c.Watch(ctx) // 1 getChildren + 1 getData per child
	defer events.Stop()
	for ev := range events.C {
		if ev.Type == cache.EventInitialized {
			fmt.Println(ev.Type)
			break
		}
		fmt.Println(ev.Type, path.Base(ev.Node.Path), string(ev.Node.Data))
	}
	_, _ = s.Conn().Create(p+"/w3", []byte("10.0.0.3"), 0, acl) // 1 getChildren + 1 getData
	ev := <-events.C
	fmt.Println(ev.Type, path.Base(ev.Node.Path), string(ev.Node.Data))
	_ = s.Conn().Delete(p+"/w1", -1) // 1 getChildren
	ev = <-events.C
	fmt.Println(ev.Type, path.Base(ev.Node.Path))
	for _, n := range c.Current() {
		fmt.Println("current:", path.Base(n.Path), string(n.Data))
	}
	// Output:
	// added w1 10.0.0.1
	// added w2 10.0.0.2
	// initialized
	// added w3 10.0.0.3
	// removed w1
	// current: w2 10.0.0.2
	// current: w3 10.0.0.3
}

func ExampleTreeCache() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	root := "/examples/cache/tree/config"
	cleanup(s.Conn(), root)
	ensure(s, root)
	acl := s.ACLFor(root)
	_, _ = s.Conn().Create(root+"/db", []byte("pg"), 0, acl)
	_, _ = s.Conn().Create(root+"/db/pool", []byte("10"), 0, acl)
	_, _ = s.Conn().Create(root+"/db/pool/deeper", []byte("not cached"), 0, acl)
	_, _ = s.Conn().Create(root+"/http", []byte(":8080"), 0, acl)

	// The root and two levels below it.
	c, err := cache.NewTreeCache(s, root, cache.WithMaxDepth(2))
	if err != nil {
		fmt.Println(err)
		return
	}
	events := c.Watch(ctx) // 1 getData per node + 1 getChildren per node above the limit
	defer events.Stop()
	for ev := range events.C {
		if ev.Type == cache.EventInitialized {
			break
		}
	}
	for _, n := range c.Nodes() {
		fmt.Printf("%s = %q\n", n.Path[len(root):], n.Data)
	}
	_, _ = s.Conn().Set(root+"/db/pool", []byte("20"), -1) // 1 getData
	ev := <-events.C
	fmt.Println(ev.Type, ev.Node.Path[len(root):], string(ev.Node.Data))
	kids, _ := c.Children(root)
	fmt.Println("children of the root:", kids)
	// Output:
	// = ""
	// /db = "pg"
	// /db/pool = "10"
	// /http = ":8080"
	// updated /db/pool 20
	// children of the root: [db http]
}
