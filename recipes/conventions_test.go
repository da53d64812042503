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
	(*lock.Lease)(nil), (*lock.MultiMutex)(nil), (*lock.Mutex)(nil), (*lock.Semaphore)(nil),
	(*partition.Partitioner)(nil), (*partition.Partition)(nil),
	(*persistent.Node)(nil),
	(*queue.Claim)(nil), (*queue.Queue)(nil),
	(*recipes.Holding)(nil), (*recipes.Session)(nil), (*recipes.WatchSet)(nil),
	(*recipes.Subscription)(nil), (*recipes.Watch)(nil),
	(*rwlock.RWMutex)(nil),
	(*shared.Count)(nil), (*shared.Long)(nil), (*shared.Value)(nil),
	(*twophase.Coordinator)(nil), (*twophase.Participant)(nil), (*twophase.Proposal)(nil), (*twophase.Tx)(nil),
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
func callNil(fn reflect.Value) error {
	ft := fn.Type()
	args := make([]reflect.Value, ft.NumIn())
	for i := range args {
		args[i] = reflect.Zero(ft.In(i))
		if ft.In(i) == reflect.TypeFor[context.Context]() {
			args[i] = reflect.ValueOf(context.Background())
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
		"barrier.New":             func() (any, error) { return barrier.New(s, "/b") },
		"barrier.NewDouble":       func() (any, error) { return barrier.NewDouble(s, "/d", 2) },
		"discovery.New":           func() (any, error) { return discovery.New(s, "/s") },
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
		"twophase.NewParticipant": func() (any, error) { return twophase.NewParticipant(s, "/2pc", "site") },
	} {
		if v, err := f(); err != nil || reflect.ValueOf(v).IsNil() {
			t.Errorf("%s on an unconnected Session = %v, %v; want a value", name, v, err)
		}
	}
	if after := runtime.NumGoroutine(); after != before {
		t.Errorf("the constructors left %d goroutines, %d before", after, before)
	}
}
