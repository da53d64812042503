package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// typedNilOps are nil pointers of every request type FencedMulti takes.
var typedNilOps = []any{
	(*zk.CreateRequest)(nil), (*zk.SetDataRequest)(nil), (*zk.DeleteRequest)(nil), (*zk.CheckVersionRequest)(nil),
}

// noPanic runs f and turns a panic into an error.
func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// TestFencedMultiTypedNilOp: FencedMulti, of package recipes and of a
// holding, refuses a typed nil op ((*zk.SetDataRequest)(nil), ...) with
// ErrBadArgument, beside valid ops or alone, and sends nothing (counted on
// the wire). It panicked before (nil pointer dereference).
func TestFencedMultiTypedNilOp(t *testing.T) {
	e := ensemble(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, counter := countedSession(t, e.Addrs())
	h, err := recipes.Acquire(ctx, s, recipes.Spec{Path: testPath(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Release(context.Background()) }()
	valid := &zk.SetDataRequest{Path: h.Path(), Version: -1}
	before := counter.Snapshot()
	for _, op := range typedNilOps {
		for name, call := range map[string]func() error{
			"recipes.FencedMulti": func() error { _, err := recipes.FencedMulti(ctx, s, h.Fence(), op); return err },
			"Holding.FencedMulti": func() error { _, err := h.FencedMulti(ctx, valid, op); return err },
		} {
			if err := noPanic(call); !errors.Is(err, recipes.ErrBadArgument) {
				t.Errorf("%s(%T(nil)) = %v, want ErrBadArgument", name, op, err)
			}
		}
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Errorf("refused calls sent %v", d.Requests)
	}
}

// TestDigestAuthOverLimit: WithDigestAuth credentials whose setAuth request
// is over the session's request limit make Connect fail at once with
// recipes.ErrDataTooLarge (and recipes.ErrBadArgument), nothing dialed;
// before, Connect sent the setAuth, the server dropped the connection, and
// go-zookeeper sent it again after every new connection until ctx ended.
// A setAuth of exactly the limit is accepted by the server: the check
// refuses nothing the server would take.
func TestDigestAuthOverLimit(t *testing.T) {
	e := ensemble(t)
	const fixed = 8 + 4 + 10 + 4 // setAuth: header, type, "digest", length of "user:password"
	for _, user := range []string{"alice", strings.Repeat("u", 1100*1024)} {
		password := "p"
		if len(user) < 10 {
			password = strings.Repeat("p", 1100*1024)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		s, err := recipes.Connect(ctx, e.Addrs(), append(testutil.SessionOptions(), recipes.WithDigestAuth(user, password))...)
		cancel()
		if s != nil {
			_ = s.Close()
		}
		if !errors.Is(err, recipes.ErrDataTooLarge) || !errors.Is(err, recipes.ErrBadArgument) || time.Since(start) > time.Second {
			t.Errorf("Connect with a %d-byte user and a %d-byte password = %.200v after %v; want ErrDataTooLarge at once",
				len(user), len(password), err, time.Since(start))
		}
	}
	at := testutil.ConnectAs(t, e.Addrs(), "a", strings.Repeat("p", recipes.DefaultMaxData-fixed-len("a:")))
	if _, _, err := at.Conn().Exists("/"); err != nil {
		t.Fatalf("a session whose setAuth is at the limit: %v", err)
	}
}
