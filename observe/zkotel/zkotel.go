// Package zkotel turns a recipes.Session's observer events into
// OpenTelemetry metrics. It is a module of its own, so that the library
// keeps no dependency on OpenTelemetry: a service that wants the metrics
// imports it and passes the observer to recipes.WithObserver.
//
// The instruments (docs/observability.md lists them with the slog
// attributes and package zkprom's Prometheus names), all from the meter
// named by MeterName:
//
//	zookeeper.calls                 counter         {op, outcome}
//	zookeeper.call.duration         histogram (s)   {op}
//	zookeeper.holdings.acquired     counter         {kind}
//	zookeeper.holding.wait          histogram (s)   {kind}
//	zookeeper.holdings.ended        counter         {kind, end}
//	zookeeper.holding.held          histogram (s)   {kind, end}
//	zookeeper.holdings.active       up-down counter {kind}
//	zookeeper.session.state_changes counter         {state}
//	zookeeper.lease.remaining       histogram (s)   (at each renewal)
//	zookeeper.lease.expirations     counter
//
// outcome is recipes.CallEvent.Outcome, end recipes.HoldingEvent.End, kind
// recipes.HoldingEvent.Kind, state recipes.State's String. No attribute
// carries a path or a session id: their number has no bound.
package zkotel

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkrecipes/zkrecipes/recipes"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// MeterName is the name of the meter the instruments come from.
const MeterName = "github.com/zkrecipes/zkrecipes/observe/zkotel"

var (
	// ErrNilProvider: New was given no meter provider.
	ErrNilProvider = errors.New("zkotel: nil meter provider")
	// ErrInstrument: the meter refused to make an instrument.
	ErrInstrument = errors.New("zkotel: instrument")
)

// Observer is a recipes.Observer that records OpenTelemetry metrics. One
// Observer may serve several Sessions; it is safe for concurrent use.
type Observer struct {
	calls        metric.Int64Counter
	callDuration metric.Float64Histogram
	acquired     metric.Int64Counter
	wait         metric.Float64Histogram
	ended        metric.Int64Counter
	held         metric.Float64Histogram
	active       metric.Int64UpDownCounter
	states       metric.Int64Counter
	remaining    metric.Float64Histogram
	expirations  metric.Int64Counter
}

var _ recipes.Observer = (*Observer)(nil)

// New makes the instruments from mp's meter MeterName. It fails with
// ErrNilProvider, or ErrInstrument when the meter refuses one.
func New(mp metric.MeterProvider) (*Observer, error) {
	if mp == nil {
		return nil, ErrNilProvider
	}
	m := mp.Meter(MeterName)
	o := &Observer{}
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error
	o.calls, err = m.Int64Counter("zookeeper.calls", metric.WithDescription("ZooKeeper requests answered (or whose connection ended first)."))
	add(err)
	o.callDuration, err = m.Float64Histogram("zookeeper.call.duration", metric.WithUnit("s"), metric.WithDescription("Time from a request's write to its reply's read."))
	add(err)
	o.acquired, err = m.Int64Counter("zookeeper.holdings.acquired", metric.WithDescription("Holdings acquired (locks, leases, leader terms, queue claims)."))
	add(err)
	o.wait, err = m.Float64Histogram("zookeeper.holding.wait", metric.WithUnit("s"), metric.WithDescription("Time from the call that acquired a holding until it held."))
	add(err)
	o.ended, err = m.Int64Counter("zookeeper.holdings.ended", metric.WithDescription("Holdings ended: released, or lost with a cause."))
	add(err)
	o.held, err = m.Float64Histogram("zookeeper.holding.held", metric.WithUnit("s"), metric.WithDescription("Time a holding was held."))
	add(err)
	o.active, err = m.Int64UpDownCounter("zookeeper.holdings.active", metric.WithDescription("Holdings acquired and not ended."))
	add(err)
	o.states, err = m.Int64Counter("zookeeper.session.state_changes", metric.WithDescription("Session state changes, by the new state."))
	add(err)
	o.remaining, err = m.Float64Histogram("zookeeper.lease.remaining", metric.WithUnit("s"), metric.WithDescription("Lease left when a reply renewed it."))
	add(err)
	o.expirations, err = m.Int64Counter("zookeeper.lease.expirations", metric.WithDescription("Times the lease ran out and every holding was cancelled."))
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInstrument, err)
	}
	return o, nil
}

// The observer's methods have no context of their own.
var bg = context.Background()

// ObserveCall counts c and records its duration.
func (o *Observer) ObserveCall(c recipes.CallEvent) {
	op := attribute.String("op", c.Op)
	o.calls.Add(bg, 1, metric.WithAttributes(op, attribute.String("outcome", c.Outcome())))
	o.callDuration.Record(bg, c.Duration.Seconds(), metric.WithAttributes(op))
}

// ObserveHolding counts acquisitions and ends, their waits and lengths.
func (o *Observer) ObserveHolding(h recipes.HoldingEvent) {
	kind := metric.WithAttributes(attribute.String("kind", h.Kind))
	switch h.Phase {
	case recipes.HoldingAcquired:
		o.acquired.Add(bg, 1, kind)
		o.wait.Record(bg, h.Waited.Seconds(), kind)
		o.active.Add(bg, 1, kind)
	case recipes.HoldingEnded:
		ended := metric.WithAttributes(attribute.String("kind", h.Kind), attribute.String("end", h.End()))
		o.ended.Add(bg, 1, ended)
		o.held.Record(bg, h.Held.Seconds(), ended)
		o.active.Add(bg, -1, kind)
	}
}

// ObserveState counts the change.
func (o *Observer) ObserveState(c recipes.StateChange) {
	o.states.Add(bg, 1, metric.WithAttributes(attribute.String("state", c.State.String())))
}

// ObserveLease records the lease left at a renewal, or counts an expiry.
func (o *Observer) ObserveLease(e recipes.LeaseEvent) {
	if e.Expired {
		o.expirations.Add(bg, 1)
		return
	}
	o.remaining.Record(bg, e.Remaining.Seconds())
}
