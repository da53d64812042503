// Package latest is the latest-value mailbox behind the recipes' coalescing
// streams (group.Watch, leader.Election.Watch): a follower puts each new
// value and never waits; the reader receives the newest value not yet
// received, never an older one after a newer one.
package latest

import (
	"context"
	"sync"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Box holds the newest value put and not yet taken by Deliver. A Box is
// safe for concurrent use by one Deliver and any number of Puts.
type Box[T any] struct {
	notify chan struct{} // capacity 1: "a value is waiting"
	mu     sync.Mutex
	v      T
	has    bool
}

// NewBox returns an empty Box.
func NewBox[T any]() *Box[T] {
	return &Box[T]{notify: make(chan struct{}, 1)}
}

// Put makes v the newest value; it replaces one not yet taken. It never
// blocks.
func (b *Box[T]) Put(v T) {
	b.mu.Lock()
	b.v, b.has = v, true
	b.mu.Unlock()
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

func (b *Box[T]) take() (T, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.v, b.has
	var zero T
	b.v, b.has = zero, false
	return v, ok
}

// Deliver sends the newest value to out until ctx is done or stop is
// closed; a value put while an earlier one waits for the reader replaces
// it. A value put before stop is closed but not yet received is dropped.
func (b *Box[T]) Deliver(ctx context.Context, out chan<- T, stop <-chan struct{}) {
	var (
		v       T
		pending bool
	)
	for {
		var send chan<- T
		if pending {
			send = out
		}
		select {
		case <-b.notify:
			if nv, ok := b.take(); ok {
				v, pending = nv, true
			}
		case send <- v:
			pending = false
		case <-ctx.Done():
			return
		case <-stop:
			return
		}
	}
}

// Stream runs follow on a goroutine of its own and delivers what it puts on
// the returned Stream's C, coalesced as Deliver does. follow returns nil
// when its ctx ends, or the error that ended it (the Stream's Err, see
// recipes.StartStream); C closes once follow has returned, dropping a value
// the reader has not taken. A nil ctx yields a closed Stream whose Err
// wraps recipes.ErrBadArgument.
func Stream[T any](ctx context.Context, follow func(ctx context.Context, put func(T)) error) *recipes.Stream[T] {
	return recipes.StartStream(ctx, func(ctx context.Context, out chan<- T) error {
		b := NewBox[T]()
		followed := make(chan struct{})
		var err error
		go func() {
			defer close(followed)
			err = follow(ctx, b.Put)
		}()
		b.Deliver(ctx, out, followed)
		<-followed
		return err
	})
}
