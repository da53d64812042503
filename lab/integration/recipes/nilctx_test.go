package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/group"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/leader"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/persistent"
	"github.com/zkrecipes/zkrecipes/queue"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// TestNilCtxOnLiveValues backs the nil-ctx rule ("Conventions" in package
// recipes) on the values that only a server can make: holdings, a held
// Mutex, a semaphore Lease, a leader's Term, a queue Claim, a group
// Member, a discovery Registration, a started persistent.Node, a twophase
// Tx, a WatchSet and a Subscription. Every method taking a ctx, given a
// nil one, returns an error wrapping recipes.ErrBadArgument, sends
// nothing, and changes nothing: every holding is still live afterwards
// (before the rule, lock.Mutex.Unlock(nil) forgot its holding and then
// panicked, and leader.Term.Release(nil) released).
func TestNilCtxOnLiveValues(t *testing.T) {
	ensemble(t)
	s, counter := countedSession(t, zkServers())
	ctx := testutil.Ctx(t, time.Minute)
	base := testPath(t)
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	h := must(recipes.Acquire(ctx, s, recipes.Spec{Path: base + "/h"})).(*recipes.Holding)
	m := must(lock.New(s, base+"/m")).(*lock.Mutex)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	sem := must(lock.NewSemaphore(s, base+"/sem", 2)).(*lock.Semaphore)
	lease := must(sem.Acquire(ctx)).(*lock.Permit)
	e := must(leader.New(s, base+"/l")).(*leader.Election)
	term := must(e.Campaign(ctx)).(*leader.Term)
	q := must(queue.New(s, base+"/q")).(*queue.Queue)
	must(q.Put(ctx, []byte("x")))
	claim := must(q.Claim(ctx)).(*queue.Claim)
	member := must(group.Join(ctx, s, base+"/g", "id")).(*group.Member)
	d := must(discovery.New(s, base+"/svc")).(*discovery.Discovery)
	reg := must(d.Register(ctx, discovery.Instance{Name: "api", ID: "i1", Address: "a"})).(*discovery.Registration)
	node := must(persistent.New(s, base+"/n")).(*persistent.Node)
	if err := node.Start(ctx); err != nil {
		t.Fatal(err)
	}
	coord := must(twophase.NewCoordinator(s, base+"/2pc")).(*twophase.Coordinator)
	tx := must(coord.Begin(ctx, "tx", []string{"site"}, nil)).(*twophase.Tx)
	ws := must(s.NewWatchSet()).(*recipes.WatchSet)
	defer ws.Close()
	sub := s.Subscribe()
	defer sub.Close()
	live := map[string]func() context.Context{
		"Holding": h.Context, "Mutex": m.Context, "Lease": lease.Context, "Term": term.Context,
		"Claim": claim.Context, "Node": node.Present,
	}
	values := []any{h, m, lease, term, claim, member, reg, node, tx, ws, sub}

	ctxType := reflect.TypeFor[context.Context]()
	before := counter.Snapshot()
	checked := 0
	for _, v := range values {
		rv := reflect.ValueOf(v)
		for i := range rv.NumMethod() {
			fn, name := rv.Method(i), fmt.Sprintf("%T.%s", v, rv.Type().Method(i).Name)
			ft := fn.Type()
			takesCtx := false
			for j := range ft.NumIn() {
				takesCtx = takesCtx || ft.In(j) == ctxType
			}
			if !takesCtx || ft.NumOut() == 0 {
				continue
			}
			checked++
			if err := callNilCtx(fn); !errors.Is(err, recipes.ErrBadArgument) {
				t.Errorf("%s with a nil ctx = %v, want an error wrapping recipes.ErrBadArgument", name, err)
			}
		}
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Errorf("calls with a nil ctx sent %v", d.Requests)
	}
	for what, c := range live {
		if err := context.Cause(c()); err != nil {
			t.Errorf("%s ended after the calls with a nil ctx: %v", what, err)
		}
	}
	if checked < 25 {
		t.Errorf("checked %d methods: the list of values is incomplete", checked)
	}
	t.Logf("checked %d methods", checked)
	for _, release := range []func(context.Context) error{h.Release, m.Unlock, lease.Release, term.Release, claim.Release, member.Leave, reg.Leave, node.Leave} {
		if err := release(ctx); err != nil {
			t.Error(err)
		}
	}
}

// callNilCtx calls fn with a nil ctx and zero values for its other
// arguments, and returns its error; a panic is an error of its own.
func callNilCtx(fn reflect.Value) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	ft := fn.Type()
	args := make([]reflect.Value, ft.NumIn())
	for i := range args {
		args[i] = reflect.Zero(ft.In(i))
	}
	var out []reflect.Value
	if ft.IsVariadic() {
		out = fn.CallSlice(args)
	} else {
		out = fn.Call(args)
	}
	last := out[len(out)-1]
	if last.IsNil() {
		return errors.New("nil")
	}
	if err, ok := last.Interface().(error); ok {
		return err
	}
	return fmt.Errorf("returned %v", last.Type())
}
