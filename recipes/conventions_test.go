package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/barrier"
	"github.com/zkrecipes/zkrecipes/cache"
	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/partition"
	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/rwlock"
	"github.com/zkrecipes/zkrecipes/shared"
	"github.com/zkrecipes/zkrecipes/ttl"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// nilReceivers holds a nil pointer of every type of the module with
// pointer-receiver methods.
var nilReceivers = []any{
	(*barrier.Barrier)(nil), (*barrier.DoubleBarrier)(nil),
	(*cache.ChildrenCache)(nil), (*cache.NodeCache)(nil), (*cache.TreeCache)(nil),
	(*discovery.Discovery)(nil), (*discovery.Provider)(nil), (*discovery.Registration)(nil),
	(*group.Member)(nil),
	(*leader.Election)(nil), (*leader.Term)(nil),
	(*lock.Permit)(nil), (*lock.MultiMutex)(nil), (*lock.Mutex)(nil), (*lock.Semaphore)(nil),
	(*partition.Partitioner)(nil), (*partition.Partition)(nil),
	(*persistent.Node)(nil),
	(*queue.Claim)(nil), (*queue.Queue)(nil),
	(*recipes.Holding)(nil), (*recipes.Session)(nil), (*recipes.WatchSet)(nil),
	(*recipes.Subscription)(nil), (*recipes.Watch)(nil),
	(*rwlock.RWMutex)(nil),
	(*shared.Count)(nil), (*shared.Long)(nil), (*shared.Value)(nil),
	(*twophase.Coordinator)(nil), (*twophase.Site)(nil), (*twophase.Proposal)(nil), (*twophase.Tx)(nil),
}

// TestNilReceiverConvention backs the nil-receiver rule of the package
// doc ("Conventions"): every method with a pointer receiver that returns
// an error, or a Stream, returns on a nil receiver an error wrapping
// ErrBadArgument (the Stream ends with it) and does not panic. It needs no
// server: a nil receiver has no session to send with. Arguments are zero
// values, except a live ctx, so that the receiver is the only bad input.
func TestNilReceiverConvention(t *testing.T) {
	checked := 0
	for _, v := range nilReceivers {
		rv := reflect.ValueOf(v)
		for i := range rv.NumMethod() {
			m := rv.Type().Method(i)
			if _, isValue := rv.Type().Elem().MethodByName(m.Name); isValue {
				continue // a value method: a nil pointer has no value to call it on
			}
			ft := m.Type
			if ft.NumOut() == 0 {
				continue
			}
			last := ft.Out(ft.NumOut() - 1)
			isErr := last == reflect.TypeFor[error]()
			isStream := last.Kind() == reflect.Pointer && strings.HasPrefix(last.Elem().Name(), "Stream[")
			if !isErr && !isStream || m.Name == "Err" {
				continue // an accessor (Err reports a state): may panic, as in package sync
			}
			checked++
			name := fmt.Sprintf("%T.%s", v, m.Name)
			if err := callNil(rv.Method(i)); !errors.Is(err, recipes.ErrBadArgument) {
				t.Errorf("%s on a nil receiver = %v, want an error wrapping recipes.ErrBadArgument", name, err)
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked %d methods: the list of types is incomplete", checked)
	}
}

// callNil calls fn with zero arguments (a live ctx for a context) and
// returns its error, or its Stream's once the stream's channel is closed;
// a panic or a call that does not return in 5 s is an error of its own.
func callNil(fn reflect.Value) error { return callWith(fn, context.Background()) }

// callWith is callNil with ctx (nil included) for every context argument.
func callWith(fn reflect.Value, ctx context.Context) error {
	ft := fn.Type()
	args := make([]reflect.Value, ft.NumIn())
	for i := range args {
		args[i] = reflect.Zero(ft.In(i))
		if ft.In(i) == reflect.TypeFor[context.Context]() && ctx != nil {
			args[i] = reflect.ValueOf(ctx)
		}
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		var out []reflect.Value
		if ft.IsVariadic() {
			out = fn.CallSlice(args)
		} else {
			out = fn.Call(args)
		}
		last := out[len(out)-1]
		if last.IsNil() {
			done <- errors.New("nil")
			return
		}
		if err, ok := last.Interface().(error); ok {
			done <- err
			return
		}
		for c := last.Elem().FieldByName("C"); ; {
			if _, ok := c.Recv(); !ok {
				break
			}
		}
		err, _ := last.MethodByName("Err").Call(nil)[0].Interface().(error)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		return errors.New("still running after 5 s")
	}
}

// TestConstructorsSendNothing backs the constructor rule of the package
// doc ("Conventions"): every constructor succeeds on a Session that has
// no connection (so it sends nothing: there is nothing to send with) and
// starts no goroutine. The caches' constructors are not here: they check
// the read of their path against the Session's request limit, which is 0
// on an unconnected Session (lab/integration/cache tests them).
func TestConstructorsSendNothing(t *testing.T) {
	s := new(recipes.Session)
	before := runtime.NumGoroutine()
	for name, f := range map[string]func() (any, error){
		"barrier.New":       func() (any, error) { return barrier.New(s, "/b") },
		"barrier.NewDouble": func() (any, error) { return barrier.NewDouble(s, "/d", 2) },
		"discovery.New":     func() (any, error) { return discovery.New(s, "/s") },
		"Discovery.NewProvider": func() (any, error) {
			d, err := discovery.New(s, "/s")
			if err != nil {
				return nil, err
			}
			return d.NewProvider("svc")
		},
		"leader.New":              func() (any, error) { return leader.New(s, "/l") },
		"lock.New":                func() (any, error) { return lock.New(s, "/m") },
		"lock.NewMulti":           func() (any, error) { return lock.NewMulti(s, []string{"/m1", "/m2"}) },
		"lock.NewSemaphore":       func() (any, error) { return lock.NewSemaphore(s, "/sem", 2) },
		"partition.New":           func() (any, error) { return partition.New(s, "/p", []string{"a"}) },
		"persistent.New":          func() (any, error) { return persistent.New(s, "/n") },
		"queue.New":               func() (any, error) { return queue.New(s, "/q") },
		"rwlock.New":              func() (any, error) { return rwlock.New(s, "/rw") },
		"shared.NewCount":         func() (any, error) { return shared.NewCount(s, "/count", 0) },
		"shared.NewLong":          func() (any, error) { return shared.NewLong(s, "/long") },
		"shared.NewValue":         func() (any, error) { return shared.NewValue(s, "/value", nil) },
		"twophase.NewCoordinator": func() (any, error) { return twophase.NewCoordinator(s, "/2pc") },
		"twophase.NewParticipant": func() (any, error) { return twophase.NewSite(s, "/2pc", "site") },
	} {
		if v, err := f(); err != nil || reflect.ValueOf(v).IsNil() {
			t.Errorf("%s on an unconnected Session = %v, %v; want a value", name, v, err)
		}
	}
	if after := runtime.NumGoroutine(); after != before {
		t.Errorf("the constructors left %d goroutines, %d before", after, before)
	}
}

// TestNilCtxConvention backs the nil-ctx rule of the package doc
// ("Conventions"): every function and method of the module that takes a
// context.Context returns, when given a nil one, an error wrapping
// ErrBadArgument (a Stream ends with it), does not panic, and sends
// nothing. The Session is connected (to a fake server that counts
// requests), so a check of the session cannot hide a missing one of the
// ctx; the values come from the constructors, the other arguments are
// zero values or, for the package functions, valid ones.
func TestNilCtxConvention(t *testing.T) {
	addr, sent := recipes.FakeServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := recipes.Connect(ctx, []string{addr}, recipes.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var nilCtx context.Context
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	values := []any{
		s,
		must(barrier.New(s, "/b")), must(barrier.NewDouble(s, "/d", 2)),
		must(cache.NewChildrenCache(s, "/c")), must(cache.NewNodeCache(s, "/c")), must(cache.NewTreeCache(s, "/c")),
		must(discovery.New(s, "/s")), must(leader.New(s, "/l")),
		must(lock.New(s, "/m")), must(lock.NewMulti(s, []string{"/m1", "/m2"})), must(lock.NewSemaphore(s, "/sem", 2)),
		must(partition.New(s, "/p", []string{"a"})), must(persistent.New(s, "/n")), must(queue.New(s, "/q")),
		must(rwlock.New(s, "/rw")),
		must(shared.NewCount(s, "/count", 0)), must(shared.NewLong(s, "/long")), must(shared.NewValue(s, "/value", nil)),
		must(twophase.NewCoordinator(s, "/2pc")), must(twophase.NewSite(s, "/2pc", "site")),
	}
	ctxType := reflect.TypeFor[context.Context]()
	checked := 0
	check := func(name string, fn reflect.Value) {
		t.Helper()
		ft := fn.Type()
		takesCtx := false
		for i := range ft.NumIn() {
			takesCtx = takesCtx || ft.In(i) == ctxType
		}
		if !takesCtx || ft.NumOut() == 0 {
			return
		}
		checked++
		before := sent()
		if err := callWith(fn, nil); !errors.Is(err, recipes.ErrBadArgument) {
			t.Errorf("%s with a nil ctx = %v, want an error wrapping recipes.ErrBadArgument", name, err)
		}
		if n := sent() - before; n != 0 {
			t.Errorf("%s with a nil ctx sent %d requests", name, n)
		}
	}
	for _, v := range values {
		rv := reflect.ValueOf(v)
		for i := range rv.NumMethod() {
			check(fmt.Sprintf("%T.%s", v, rv.Type().Method(i).Name), rv.Method(i))
		}
	}
	funcs := map[string]func() error{
		"recipes.Connect": func() error { _, err := recipes.Connect(nilCtx, []string{addr}); return err },
		"recipes.Acquire": func() error { _, err := recipes.Acquire(nilCtx, s, recipes.Spec{Path: "/a"}); return err },
		"recipes.TryAcquire": func() error {
			_, err := recipes.TryAcquire(nilCtx, s, recipes.Spec{Path: "/a"})
			return err
		},
		"recipes.Enter": func() error { _, err := recipes.Enter(nilCtx, s, recipes.Spec{Path: "/a"}); return err },
		"recipes.Contenders": func() error {
			_, err := recipes.Contenders(nilCtx, s, recipes.Curator, "/a")
			return err
		},
		"recipes.Do": func() error {
			_, err := recipes.Do(nilCtx, s, func(*zk.Conn, int64) (int, error) { return 0, nil })
			return err
		},
		"recipes.Exec":        func() error { return recipes.Exec(nilCtx, s, func(*zk.Conn, int64) error { return nil }) },
		"recipes.CreateUnder": func() error { return recipes.CreateUnder(nilCtx, s, "/a", func(*zk.Conn, int64) error { return nil }) },
		"recipes.FencedMulti": func() error {
			_, err := recipes.FencedMulti(nilCtx, s, recipes.Fence{Token: 1, Path: "/a/n", SessionID: s.ID()})
			return err
		},
		"recipes.StartStream": func() error {
			st := recipes.StartStream(nilCtx, func(context.Context, chan<- int) error { return nil })
			for range st.C {
			}
			return st.Err()
		},
		"lock.Revoke":   func() error { return lock.Revoke(nilCtx, s, "/m/n") },
		"rwlock.Revoke": func() error { return rwlock.Revoke(nilCtx, s, "/rw/n") },
		"group.Join":    func() error { _, err := group.Join(nilCtx, s, "/g", "id"); return err },
		"group.Members": func() error { _, err := group.Members(nilCtx, s, "/g"); return err },
		"group.Watch": func() error {
			st := group.Watch(nilCtx, s, "/g")
			for range st.C {
			}
			return st.Err()
		},
		"leader.Do": func() error {
			return leader.Do(nilCtx, s, "/l", func(context.Context) error { return nil })
		},
		"leader.Run": func() error {
			e, err := leader.New(s, "/l")
			if err != nil {
				return err
			}
			return leader.Run(nilCtx, e, func(context.Context) error { return nil })
		},
		"ttl.Once": func() error { _, _, err := ttl.Once(nilCtx, s, "/t", time.Minute, nil); return err },
		"ttl.Read": func() error { _, err := ttl.Read(nilCtx, s, "/t"); return err },
	}
	for name, f := range funcs {
		checked++
		before := sent()
		if err := callWith(reflect.ValueOf(f), nil); !errors.Is(err, recipes.ErrBadArgument) {
			t.Errorf("%s with a nil ctx = %v, want an error wrapping recipes.ErrBadArgument", name, err)
		}
		if n := sent() - before; n != 0 {
			t.Errorf("%s with a nil ctx sent %d requests", name, n)
		}
	}
	if checked < 80 {
		t.Errorf("checked %d functions and methods: the list is incomplete", checked)
	}
	t.Logf("checked %d functions and methods", checked)
}

// TestVerbConvention backs the verb rule of the package doc
// ("Conventions"): a method that returns a Stream is named Watch
// (observing) or Run (taking part), and the names the rule replaced
// (Observe, Transactions, Unregister, a Close that takes a ctx) are gone.
func TestVerbConvention(t *testing.T) {
	for _, v := range nilReceivers {
		rt := reflect.TypeOf(v)
		for i := range rt.NumMethod() {
			m := rt.Method(i)
			name := fmt.Sprintf("%T.%s", v, m.Name)
			isStream := false
			if n := m.Type.NumOut(); n > 0 {
				last := m.Type.Out(n - 1)
				isStream = last.Kind() == reflect.Pointer && strings.HasPrefix(last.Elem().Name(), "Stream[")
			}
			if isStream && m.Name != "Watch" && m.Name != "Run" {
				t.Errorf("%s returns a Stream: name it Watch (observing) or Run (taking part)", name)
			}
			switch {
			case m.Name == "Observe", m.Name == "Transactions", m.Name == "Unregister":
				t.Errorf("%s: a name the verb rule replaced", name)
			case m.Name == "Close" && m.Type.NumIn() > 1 && m.Type.In(1) == reflect.TypeFor[context.Context]():
				t.Errorf("%s takes a ctx: a presence ends with Leave(ctx)", name)
			}
		}
	}
}
