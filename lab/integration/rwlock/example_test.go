package rwlock_test

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// Readers share the lock; a writer waits for them, and a reader arriving
// after the writer waits for the writer.
func ExampleRWMutex() {
	ctx := context.Background()
	a, _ := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	b, _ := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	defer a.Close()
	defer b.Close()

	reader1, _ := rwlock.New(a, "/examples/rwlock") // Curator's InterProcessReadWriteLock names
	reader2, _ := rwlock.New(b, "/examples/rwlock")
	writer, _ := rwlock.New(b, "/examples/rwlock")
	fmt.Println("reader1:", reader1.Reader().Lock(ctx))
	fmt.Println("reader2:", reader2.Reader().Lock(ctx))
	fmt.Println("writer (try):", writer.TryLock(ctx))

	done := make(chan error)
	go func() { done <- writer.Lock(ctx) }()
	_ = reader1.Reader().Unlock(ctx)
	_ = reader2.Reader().Unlock(ctx)
	fmt.Println("writer:", <-done)
	held := writer.Context() // cancelled the moment the write lock may be lost
	fmt.Println("write held:", held.Err() == nil)
	_ = writer.Unlock(ctx)
	fmt.Println("after Unlock:", context.Cause(held))
	// Output:
	// reader1: <nil>
	// reader2: <nil>
	// writer (try): rwlock: lock: locked: /examples/rwlock
	// writer: <nil>
	// write held: true
	// after Unlock: recipes: released
}

// Downgrade: write, then read without letting a writer in between, then let
// other readers in. Upgrading returns ErrUpgrade.
func ExampleRWMutex_downgrade() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	_, _ = s.Conn().Create("/example-rw-config", nil, 0, s.ACLFor("/example-rw-config"))

	m, err := rwlock.New(s, "/examples/rwlock-downgrade") // checks its arguments, sends nothing
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	// A fenced write: ZooKeeper rejects it if the write holding is gone.
	_, err = m.FencedMulti(ctx, &zk.SetDataRequest{Path: "/example-rw-config", Data: []byte("v2"), Version: -1})
	fmt.Println("fenced write:", err)
	r := m.Reader()
	fmt.Println("read lock while writing:", r.Lock(ctx))
	fmt.Println("Unlock:", m.Unlock(ctx))
	fmt.Println("still reading:", r.Context().Err() == nil)
	fmt.Println("upgrade:", m.Lock(ctx))
	fmt.Println("read unlock:", r.Unlock(ctx))
	// Output:
	// fenced write: <nil>
	// read lock while writing: <nil>
	// Unlock: <nil>
	// still reading: true
	// upgrade: rwlock: cannot upgrade a read holding to write: /examples/rwlock-downgrade
	// read unlock: <nil>
}

// Revocation: a writer asks the reader holding the lock to let go.
func ExampleRevoke() {
	ctx := context.Background()
	a, _ := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	b, _ := recipes.Connect(ctx, zkServers(), testutil.SessionOptions()...)
	defer a.Close()
	defer b.Close()

	reader, _ := rwlock.New(a, "/examples/rwlock-revoke", rwlock.WithRevocation())
	if err := reader.Reader().Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	go func() {
		<-reader.Reader().Revoked() // asked to release
		_ = reader.Reader().Unlock(ctx)
	}()

	writer, _ := rwlock.New(b, "/examples/rwlock-revoke")
	ps, _ := writer.Participants(ctx)
	for _, p := range ps {
		if p.Role == recipes.RoleRead {
			fmt.Println("revoke reader:", rwlock.Revoke(ctx, b, p.Node))
		}
	}
	fmt.Println("writer:", writer.Lock(ctx))
	_ = writer.Unlock(ctx)
	// Output:
	// revoke reader: <nil>
	// writer: <nil>
}
