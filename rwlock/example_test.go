package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
)

// Readers share the lock, a writer holds it alone; each side acts only while
// its holding's context is not done. Needs a ZooKeeper server, so it is
// compiled but not run by go test (lab/integration/rwlock runs its own
// against a real ensemble).
func ExampleRWMutex() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	// One RWMutex per would-be holder; Curator's InterProcessReadWriteLock names.
	rw, err := rwlock.New(s, "/app/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}
	reader := rw.Reader() // the read side, with lock.Mutex's methods
	writer, err := rwlock.New(s, "/app/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}

	// Read side: shared with other readers, waits for writers queued ahead.
	if err := reader.Lock(ctx); err != nil { // uncontended: 1 create + 1 getChildren (+1 getData)
		log.Fatal(err)
	}
	if err := readCatalog(reader.Context()); err != nil { // stops the moment the read lock may be lost
		log.Print(err)
	}
	if err := reader.Unlock(ctx); err != nil { // 1 delete; wakes at most the writer behind us
		log.Print(err)
	}

	// Write side: exclusive.
	if err := writer.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	defer writer.Unlock(ctx) // 1 delete
	held := writer.Context()
	select {
	case <-held.Done():
		log.Print("write lock lost: ", context.Cause(held))
		return
	default: // still held: write, fenced by our write node
	}
	_, err = writer.FencedMulti(ctx, &zk.SetDataRequest{Path: "/app/catalog", Data: []byte("v2"), Version: -1})
	if errors.Is(err, recipes.ErrFenced) {
		log.Print("not written: the write lock was lost")
	}
	fmt.Println("written under token", writer.Fence().Token)
}

func readCatalog(ctx context.Context) error { return ctx.Err() }

// Downgrade: write, then keep reading without letting a writer in between.
// Upgrading a read holding returns ErrUpgrade.
func ExampleRWMutex_downgrade() {
	ctx := context.Background()
	s, err := recipes.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	m, err := rwlock.New(s, "/app/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	if err := m.Reader().Lock(ctx); err != nil { // downgrade: succeeds at once while writing
		log.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil { // the read holding stays
		log.Fatal(err)
	}
	fmt.Println("reading:", m.Reader().Context().Err() == nil, "token", m.Reader().Fence().Token)
	fmt.Println(errors.Is(m.Lock(ctx), rwlock.ErrUpgrade)) // true
	if err := m.Reader().Unlock(ctx); err != nil {
		log.Print(err)
	}
}

// Bad arguments are reported by New, with sentinel errors, and no RWMutex is
// made.
func ExampleNew_badInput() {
	m, err := rwlock.New(nil, "/app/locks/catalog")
	fmt.Println(m == nil, errors.Is(err, recipes.ErrNilSession))
	// Output: true true
}
