package zkotel

import (
	"errors"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// refusing is a meter provider whose meter refuses to make histograms.
type refusing struct{ noop.MeterProvider }

type refusingMeter struct{ noop.Meter }

var errRefused = errors.New("refused")

func (refusing) Meter(string, ...metric.MeterOption) metric.Meter { return refusingMeter{} }

func (refusingMeter) Float64Histogram(string, ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return nil, errRefused
}

// TestNewRefusals: no provider; a meter that refuses an instrument.
func TestNewRefusals(t *testing.T) {
	if _, err := New(nil); !errors.Is(err, ErrNilProvider) {
		t.Errorf("New(nil) = %v, want ErrNilProvider", err)
	}
	if _, err := New(refusing{}); !errors.Is(err, ErrInstrument) || !errors.Is(err, errRefused) {
		t.Errorf("New with a refusing meter = %v, want ErrInstrument wrapping the refusal", err)
	}
	if _, err := New(noop.NewMeterProvider()); err != nil {
		t.Errorf("New(noop) = %v", err)
	}
}
