package observe_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/observe/zkotel"
	"github.com/zkrecipes/zkrecipes/observe/zkprom"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// outcome is what a metrics test compares its adapter's values with.
type outcome struct {
	wire   map[string]int64 // requests on the wire, by op name
	rec    *recorder        // every event, as the adapter saw them
	states map[string]int64 // state changes, by state
	lock   []recipes.HoldingEvent
}

// lifeOfASession runs a session observed by obs (and a recorder) through a
// lock acquired and released, a cut link (suspension) and its restoration
// (reconnected or, if the server expired the session meanwhile, lost and
// connected anew), then closes it.
func lifeOfASession(t *testing.T, obs recipes.Observer) outcome {
	t.Helper()
	e := ensemble(t)
	link, err := e.NewLink("observe-metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	r := &recorder{}
	s, counter := testutil.CountedSession(t, link.Addrs(), recipes.WithObserver(recipes.Observers(obs, r)))
	m, err := lock.New(s, testPath(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the holding's end", func() bool { return len(r.holdingsOf("lock")) == 2 })
	if err := link.Cut(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "suspended", func() bool { return r.sawState(recipes.StateSuspended) })
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "usable again", func() bool {
		return r.sawState(recipes.StateReconnected) || r.sawState(recipes.StateLost) && s.State() == recipes.StateConnected
	})
	testutil.CloseSession(t, s)
	_, _, states, _ := r.snapshot()
	o := outcome{wire: byName(counter.Snapshot()), rec: r, states: make(map[string]int64), lock: r.holdingsOf("lock")}
	for _, c := range states {
		o.states[c.State.String()]++
	}
	t.Logf("wire %v, states %v", o.wire, o.states)
	return o
}

// TestPrometheus scrapes, over HTTP on loopback, the metrics zkprom made of
// a real session's life: calls by op equal the requests on the wire, call
// durations one sample per call, the lock acquired and released once and
// no longer active, every state change counted, one lease sample per
// renewal.
func TestPrometheus(t *testing.T) {
	reg := prometheus.NewRegistry()
	obs, err := zkprom.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zkprom.New(reg); err == nil {
		t.Error("a second Observer on the same registry registered")
	}
	o := lifeOfASession(t, obs)

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(name, by string, value func(*dto.Metric) float64, where map[string]string) map[string]int64 {
		out := make(map[string]int64)
		f := fams[name]
		if f == nil {
			return out
		}
	metrics:
		for _, m := range f.GetMetric() {
			labels := make(map[string]string)
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range where {
				if labels[k] != v {
					continue metrics
				}
			}
			out[labels[by]] += int64(value(m))
		}
		return out
	}
	counter := func(m *dto.Metric) float64 { return m.GetCounter().GetValue() }
	gauge := func(m *dto.Metric) float64 { return m.GetGauge().GetValue() }
	samples := func(m *dto.Metric) float64 { return float64(m.GetHistogram().GetSampleCount()) }

	if got := sum("zookeeper_calls_total", "op", counter, nil); !maps.Equal(got, o.wire) {
		t.Errorf("zookeeper_calls_total by op = %v, the wire carried %v", got, o.wire)
	}
	if got := sum("zookeeper_call_duration_seconds", "op", samples, nil); !maps.Equal(got, o.wire) {
		t.Errorf("zookeeper_call_duration_seconds samples by op = %v, want %v", got, o.wire)
	}
	if got := sum("zookeeper_holdings_acquired_total", "kind", counter, nil); !maps.Equal(got, map[string]int64{"lock": 1}) {
		t.Errorf("zookeeper_holdings_acquired_total = %v, want lock 1", got)
	}
	if got := sum("zookeeper_holdings_ended_total", "end", counter, map[string]string{"kind": "lock"}); !maps.Equal(got, map[string]int64{"released": 1}) {
		t.Errorf("zookeeper_holdings_ended_total{kind=lock} by end = %v, want released 1", got)
	}
	if got := sum("zookeeper_holding_wait_seconds", "kind", samples, nil); got["lock"] != 1 {
		t.Errorf("zookeeper_holding_wait_seconds samples = %v, want lock 1", got)
	}
	if got := sum("zookeeper_holdings_active", "kind", gauge, nil); got["lock"] != 0 {
		t.Errorf("zookeeper_holdings_active = %v, want lock 0", got)
	}
	if got := sum("zookeeper_session_state_changes_total", "state", counter, nil); !maps.Equal(got, o.states) || got["suspended"] < 1 {
		t.Errorf("zookeeper_session_state_changes_total = %v, the session reported %v (a suspension at least)", got, o.states)
	}
	_, _, _, leases := o.rec.snapshot()
	renewals := int64(0)
	for _, l := range leases {
		if !l.Expired {
			renewals++
		}
	}
	if got := sum("zookeeper_lease_remaining_seconds", "", samples, nil)[""]; got != renewals || got == 0 {
		t.Errorf("zookeeper_lease_remaining_seconds samples = %d, want %d renewals (some)", got, renewals)
	}
}

// TestOpenTelemetry collects, through an SDK ManualReader, the metrics
// zkotel recorded of a real session's life and compares them as
// TestPrometheus does.
func TestOpenTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	obs, err := zkotel.New(mp)
	if err != nil {
		t.Fatal(err)
	}
	o := lifeOfASession(t, obs)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	find := func(name string) metricdata.Aggregation {
		for _, sm := range rm.ScopeMetrics {
			if sm.Scope.Name != zkotel.MeterName {
				continue
			}
			for _, m := range sm.Metrics {
				if m.Name == name {
					return m.Data
				}
			}
		}
		return nil
	}
	attr := func(s attribute.Set, k string) string { v, _ := s.Value(attribute.Key(k)); return v.AsString() }
	sums := func(name, by string) map[string]int64 {
		out := make(map[string]int64)
		if d, ok := find(name).(metricdata.Sum[int64]); ok {
			for _, p := range d.DataPoints {
				out[attr(p.Attributes, by)] += p.Value
			}
		}
		return out
	}
	counts := func(name, by string) map[string]int64 {
		out := make(map[string]int64)
		if d, ok := find(name).(metricdata.Histogram[float64]); ok {
			for _, p := range d.DataPoints {
				out[attr(p.Attributes, by)] += int64(p.Count)
			}
		}
		return out
	}
	if got := sums("zookeeper.calls", "op"); !maps.Equal(got, o.wire) {
		t.Errorf("zookeeper.calls by op = %v, the wire carried %v", got, o.wire)
	}
	if got := counts("zookeeper.call.duration", "op"); !maps.Equal(got, o.wire) {
		t.Errorf("zookeeper.call.duration counts by op = %v, want %v", got, o.wire)
	}
	if got := sums("zookeeper.holdings.acquired", "kind"); !maps.Equal(got, map[string]int64{"lock": 1}) {
		t.Errorf("zookeeper.holdings.acquired = %v, want lock 1", got)
	}
	if got := sums("zookeeper.holdings.ended", "end"); !maps.Equal(got, map[string]int64{"released": 1}) {
		t.Errorf("zookeeper.holdings.ended by end = %v, want released 1", got)
	}
	if got := counts("zookeeper.holding.held", "kind"); got["lock"] != 1 {
		t.Errorf("zookeeper.holding.held counts = %v, want lock 1", got)
	}
	if got := sums("zookeeper.holdings.active", "kind"); got["lock"] != 0 || len(got) != 1 {
		t.Errorf("zookeeper.holdings.active = %v, want lock 0", got)
	}
	if got := sums("zookeeper.session.state_changes", "state"); !maps.Equal(got, o.states) || got["suspended"] < 1 {
		t.Errorf("zookeeper.session.state_changes = %v, the session reported %v (a suspension at least)", got, o.states)
	}
	if got := counts("zookeeper.lease.remaining", "")[""]; got == 0 {
		t.Error("no lease renewal recorded")
	}
}
