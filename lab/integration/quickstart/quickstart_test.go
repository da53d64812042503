// Package quickstart_test runs the README's quickstart, as written there,
// against a real ensemble, and checks the README's links.
package quickstart_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// quickstart begin
// run takes a lock, writes under its fence, and gives the lock back.
func run(ctx context.Context, servers []string, opts ...recipes.Option) error {
	s, err := recipes.Connect(ctx, servers, opts...)
	if err != nil {
		return err
	}
	defer s.Close() // ends the session: its ephemeral nodes go with it

	// The node the fenced write guards must exist first.
	if _, err := s.Conn().Create("/orders", nil, 0, s.ACLFor("/orders")); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}

	m, err := lock.New(s, "/locks/orders") // sends nothing
	if err != nil {
		return err
	}
	if err := m.Lock(ctx); err != nil { // 1 create + 1 getChildren, one round trip
		return err
	}
	defer m.Unlock(context.Background()) // 1 delete

	// Act only while held: the write fails with recipes.ErrFenced once
	// another process may hold the lock.
	_, err = m.FencedMulti(m.Context(), &zk.SetDataRequest{Path: "/orders", Data: []byte("next batch"), Version: -1})
	return err
}

// quickstart end

// TestQuickstart runs the README's quickstart on a one-server ensemble
// (the ensemble's timing given to the Session: see docs/design.md, The
// lease) and checks the write landed.
func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real ZooKeeper ensemble")
	}
	e := testenv.New(t, testenv.Config{Servers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, e.DirectAddrs(), recipes.WithSessionTimeout(4*time.Second), recipes.WithEnsembleTiming(e.Timing())); err != nil {
		t.Fatal(err)
	}
	c, _, err := zk.Connect(e.DirectAddrs(), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data, _, err := c.Get("/orders")
	if err != nil || string(data) != "next batch" {
		t.Fatalf("/orders after the quickstart: %q, %v", data, err)
	}
}

// TestReadmeQuickstartIsThisCode: the README's quickstart block is the
// run function above, character for character.
func TestReadmeQuickstartIsThisCode(t *testing.T) {
	src, err := os.ReadFile("quickstart_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(src), "// quickstart begin\n")
	code, _, _ := strings.Cut(after, "\n\n// quickstart end")
	if code == "" || !strings.Contains(string(readme), "```go\n"+code+"\n```") {
		t.Errorf("README.md's quickstart block differs from run in quickstart_test.go; copy it:\n%s", code)
	}
}
