package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// An ensemble for one test: start it, talk to it through its proxied
// addresses, cut the client links and restore them, and see the session
// survive. In a test, testenv.New(t, cfg) does the Start and the Close (on
// t.Cleanup); an Example has no t, so it calls them itself.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := testenv.Start(ctx, testenv.Config{Servers: 1})
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	defer e.Close(context.Background())

	conn, events, err := zk.Connect(e.Addrs(), 4*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		fmt.Println("connect:", err)
		return
	}
	defer conn.Close()
	// state waits for the session to reach want, or gives up after 30 s.
	state := func(want zk.State) error {
		deadline := time.After(30 * time.Second)
		for {
			select {
			case ev := <-events:
				if ev.Type == zk.EventSession && ev.State == want {
					return nil
				}
			case <-deadline:
				return fmt.Errorf("no %v in 30 s", want)
			}
		}
	}
	if err := state(zk.StateHasSession); err != nil {
		fmt.Println(err)
		return
	}
	session := conn.SessionID()
	if _, err := conn.Create("/greeting", []byte("hello"), 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		fmt.Println("create:", err)
		return
	}

	// The fault: every client connection dropped, new ones refused.
	if err := e.Cut(); err != nil {
		fmt.Println("cut:", err)
		return
	}
	if err := state(zk.StateDisconnected); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cut: disconnected")

	// Healed well within the 4 s session timeout: the same session resumes.
	if err := e.Restore(); err != nil {
		fmt.Println("restore:", err)
		return
	}
	if err := state(zk.StateHasSession); err != nil {
		fmt.Println(err)
		return
	}
	data, _, err := conn.Get("/greeting")
	fmt.Printf("restored: same session %v, /greeting = %q, err %v\n", conn.SessionID() == session, data, err)
	// Output:
	// cut: disconnected
	// restored: same session true, /greeting = "hello", err <nil>
}

// quiet drops go-zookeeper's log lines (a cut makes it log the lost
// connection).
type quiet struct{}

func (quiet) Printf(string, ...any) {}
