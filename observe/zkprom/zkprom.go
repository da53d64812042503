// Package zkprom turns a recipes.Session's observer events into Prometheus
// metrics. It is a module of its own, so that the library keeps no
// dependency on Prometheus: a service that wants the metrics imports it
// and passes the observer to recipes.WithObserver.
//
// The metrics (docs/observability.md lists them with the slog attributes
// and the OpenTelemetry instruments of package zkotel):
//
//	zookeeper_calls_total{op,outcome}              counter
//	zookeeper_call_duration_seconds{op}            histogram
//	zookeeper_holdings_acquired_total{kind}        counter
//	zookeeper_holding_wait_seconds{kind}           histogram
//	zookeeper_holdings_ended_total{kind,end}       counter
//	zookeeper_holding_held_seconds{kind,end}       histogram
//	zookeeper_holdings_active{kind}                gauge
//	zookeeper_session_state_changes_total{state}   counter
//	zookeeper_lease_remaining_seconds              histogram (at each renewal)
//	zookeeper_lease_expirations_total              counter
//
// outcome is recipes.CallEvent.Outcome, end recipes.HoldingEvent.End, kind
// recipes.HoldingEvent.Kind, state recipes.State's String. No label carries
// a path or a session id: their number has no bound.
package zkprom

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zkrecipes/zkrecipes/recipes"
)

var (
	// ErrNilRegisterer: New was given no registerer.
	ErrNilRegisterer = errors.New("zkprom: nil registerer")
	// ErrRegister: a metric could not be registered (one of the same name
	// is there already, from another Observer on the same registerer).
	ErrRegister = errors.New("zkprom: register")
)

// Observer is a recipes.Observer that updates Prometheus metrics. One
// Observer may serve several Sessions; it is safe for concurrent use.
// Each event costs a few map lookups and atomic adds, no ZooKeeper call.
type Observer struct {
	calls        *prometheus.CounterVec
	callDuration *prometheus.HistogramVec
	acquired     *prometheus.CounterVec
	wait         *prometheus.HistogramVec
	ended        *prometheus.CounterVec
	held         *prometheus.HistogramVec
	active       *prometheus.GaugeVec
	states       *prometheus.CounterVec
	remaining    prometheus.Histogram
	expirations  prometheus.Counter
}

var _ recipes.Observer = (*Observer)(nil)

// New makes the metrics and registers them with reg. It fails with
// ErrNilRegisterer, or ErrRegister when reg refuses one (nothing of this
// Observer stays registered then).
func New(reg prometheus.Registerer) (*Observer, error) {
	if reg == nil {
		return nil, ErrNilRegisterer
	}
	o := &Observer{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zookeeper_calls_total",
			Help: "ZooKeeper requests answered (or whose connection ended first), by op and outcome."}, []string{"op", "outcome"}),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "zookeeper_call_duration_seconds",
			Help: "Time from a request's write to its reply's read.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}, []string{"op"}),
		acquired: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zookeeper_holdings_acquired_total",
			Help: "Holdings acquired (locks, leases, leader terms, queue claims), by kind."}, []string{"kind"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "zookeeper_holding_wait_seconds",
			Help: "Time from the call that acquired a holding until it held.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"kind"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zookeeper_holdings_ended_total",
			Help: "Holdings ended, by kind and how: released, or the cause of their loss."}, []string{"kind", "end"}),
		held: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "zookeeper_holding_held_seconds",
			Help: "Time a holding was held, by kind and how it ended.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 12)}, []string{"kind", "end"}),
		active: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zookeeper_holdings_active",
			Help: "Holdings acquired and not ended, by kind."}, []string{"kind"}),
		states: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zookeeper_session_state_changes_total",
			Help: "Session state changes, by the new state."}, []string{"state"}),
		remaining: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zookeeper_lease_remaining_seconds",
			Help: "Lease left when a reply renewed it.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 10)}),
		expirations: prometheus.NewCounter(prometheus.CounterOpts{Name: "zookeeper_lease_expirations_total",
			Help: "Times the lease ran out and every holding was cancelled."}),
	}
	cs := []prometheus.Collector{o.calls, o.callDuration, o.acquired, o.wait, o.ended, o.held, o.active, o.states, o.remaining, o.expirations}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("%w: %w", ErrRegister, err)
		}
	}
	return o, nil
}

// ObserveCall counts c and its duration.
func (o *Observer) ObserveCall(c recipes.CallEvent) {
	o.calls.WithLabelValues(c.Op, c.Outcome()).Inc()
	o.callDuration.WithLabelValues(c.Op).Observe(c.Duration.Seconds())
}

// ObserveHolding counts acquisitions and ends, their waits and lengths.
func (o *Observer) ObserveHolding(h recipes.HoldingEvent) {
	switch h.Phase {
	case recipes.HoldingAcquired:
		o.acquired.WithLabelValues(h.Kind).Inc()
		o.wait.WithLabelValues(h.Kind).Observe(h.Waited.Seconds())
		o.active.WithLabelValues(h.Kind).Inc()
	case recipes.HoldingEnded:
		end := h.End()
		o.ended.WithLabelValues(h.Kind, end).Inc()
		o.held.WithLabelValues(h.Kind, end).Observe(h.Held.Seconds())
		o.active.WithLabelValues(h.Kind).Dec()
	}
}

// ObserveState counts the change.
func (o *Observer) ObserveState(c recipes.StateChange) {
	o.states.WithLabelValues(c.State.String()).Inc()
}

// ObserveLease records the lease left at a renewal, or counts an expiry.
func (o *Observer) ObserveLease(e recipes.LeaseEvent) {
	if e.Expired {
		o.expirations.Inc()
		return
	}
	o.remaining.Observe(e.Remaining.Seconds())
}
