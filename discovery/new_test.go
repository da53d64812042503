package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// A Session that never connected: enough for everything that must fail
// before sending.
func offline() *recipes.Session { return new(recipes.Session) }

func TestNew(t *testing.T) {
	if _, err := New(nil, "/services"); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("New(nil) = %v, want ErrNilSession", err)
	}
	for _, p := range []string{"", "services", "/a/", "/a//b", "/zookeeper", "/zookeeper/x", "/a/\x00"} {
		if _, err := New(offline(), p); !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("New(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
	for _, p := range []string{"/", "/services", "/a/b/c"} {
		d, err := New(offline(), p)
		if err != nil || d.BasePath() != p {
			t.Errorf("New(%q) = %v, %v", p, d, err)
		}
	}
}

func TestPaths(t *testing.T) {
	d, _ := New(offline(), "/services")
	root, _ := New(offline(), "/")
	tests := []struct {
		d        *Discovery
		name, id string
		want     string
		err      error
	}{
		{d, "api", "i-1", "/services/api/i-1", nil},
		{root, "api", "i-1", "/api/i-1", nil},
		{d, "", "i", "", recipes.ErrBadArgument},
		{d, "api", "", "", recipes.ErrBadArgument},
		{d, "a/b", "i", "", recipes.ErrInvalidPath},
		{d, "api", "x/y", "", recipes.ErrInvalidPath},
		{d, ".", "i", "", recipes.ErrInvalidPath},
		{d, "api", "..", "", recipes.ErrInvalidPath},
		{d, "api", "a\u0001", "", recipes.ErrInvalidPath},
		{d, "a\ufff0", "i", "", recipes.ErrInvalidPath},
	}
	for _, tt := range tests {
		got, err := tt.d.InstancePath(tt.name, tt.id)
		if tt.err == nil {
			if err != nil || got != tt.want {
				t.Errorf("InstancePath(%q, %q) = %q, %v; want %q", tt.name, tt.id, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, tt.err) || !errors.Is(err, ErrInvalidInstance) {
			t.Errorf("InstancePath(%q, %q) = %q, %v; want ErrInvalidInstance and %v", tt.name, tt.id, got, err, tt.err)
		}
	}
}

// Register and Update check the instance before sending anything.
func TestRegisterRefuses(t *testing.T) {
	d, _ := New(offline(), "/services")
	ctx := context.Background()
	ok := Instance{Name: "api", ID: "i-1", Address: "10.0.0.1", Port: 80}
	tests := []struct {
		name string
		edit func(*Instance)
		also error
	}{
		{"empty name", func(i *Instance) { i.Name = "" }, recipes.ErrBadArgument},
		{"empty id", func(i *Instance) { i.ID = "" }, recipes.ErrBadArgument},
		{"slash in id", func(i *Instance) { i.ID = "a/b" }, recipes.ErrInvalidPath},
		{"negative port", func(i *Instance) { i.Port = -1 }, recipes.ErrBadArgument},
		{"port too big", func(i *Instance) { i.SSLPort = 65536 }, recipes.ErrBadArgument},
		{"sequential", func(i *Instance) { i.ServiceType = DynamicSequential }, recipes.ErrBadArgument},
		{"unknown type", func(i *Instance) { i.ServiceType = "dynamic" }, recipes.ErrBadArgument},
		{"invalid payload", func(i *Instance) { i.Payload = json.RawMessage(`{"a":`) }, recipes.ErrBadArgument},
		{"bare array payload", func(i *Instance) { i.Payload = json.RawMessage(`[1,2]`) }, recipes.ErrBadArgument},
		{"extra named like a field", func(i *Instance) { i.Extra = map[string]json.RawMessage{"id": json.RawMessage(`"x"`)} }, recipes.ErrBadArgument},
	}
	for _, tt := range tests {
		inst := ok
		tt.edit(&inst)
		_, err := d.Register(ctx, inst)
		if !errors.Is(err, ErrInvalidInstance) || !errors.Is(err, tt.also) {
			t.Errorf("%s: Register = %v, want ErrInvalidInstance and %v", tt.name, err, tt.also)
		}
	}
	big := ok
	big.Payload = json.RawMessage(`"` + strings.Repeat("x", recipes.DefaultMaxData) + `"`)
	if _, err := d.Register(ctx, big); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("Register of %d bytes = %v, want ErrDataTooLarge", len(big.Payload), err)
	}
	// A valid instance gets as far as the session, which never connected.
	if _, err := d.Register(ctx, ok); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("Register on an unconnected session = %v, want ErrNilSession", err)
	}
	// ... and is not left registered.
	if _, err := d.Register(ctx, ok); errors.Is(err, ErrAlreadyRegistered) {
		t.Error("a failed Register left its id registered")
	}
	// A done ctx sends nothing, even for a valid instance.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.Register(done, ok); !errors.Is(err, context.Canceled) {
		t.Errorf("Register with a done ctx = %v", err)
	}
}

func TestQueriesRefuse(t *testing.T) {
	d, _ := New(offline(), "/services")
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Names(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Names(done) = %v", err)
	}
	if _, err := d.Instances(done, "api"); !errors.Is(err, context.Canceled) {
		t.Errorf("Instances(done) = %v", err)
	}
	if _, err := d.Instance(done, "api", "i"); !errors.Is(err, context.Canceled) {
		t.Errorf("Instance(done) = %v", err)
	}
	ctx := context.Background()
	if _, err := d.Instances(ctx, "a/b"); !errors.Is(err, ErrInvalidInstance) {
		t.Errorf("Instances(bad name) = %v", err)
	}
	if _, err := d.Instance(ctx, "api", ""); !errors.Is(err, ErrInvalidInstance) {
		t.Errorf("Instance(empty id) = %v", err)
	}
	if _, err := d.Names(ctx); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("Names on an unconnected session = %v", err)
	}
}

func TestNewProviderRefuses(t *testing.T) {
	d, _ := New(offline(), "/services")
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		opts []ProviderOption
		err  error
	}{
		{"nil strategy", []ProviderOption{WithStrategy(nil)}, recipes.ErrBadArgument},
		{"nil filter", []ProviderOption{WithFilter(nil)}, recipes.ErrBadArgument},
		{"zero window", []ProviderOption{WithDownPolicy(0, 2)}, recipes.ErrBadArgument},
		{"zero threshold", []ProviderOption{WithDownPolicy(time.Second, 0)}, recipes.ErrBadArgument},
	} {
		if p, err := d.NewProvider("api", tt.opts...); !errors.Is(err, tt.err) || p != nil {
			t.Errorf("%s: NewProvider = %v, %v; want %v", tt.name, p, err, tt.err)
		}
	}
	if _, err := d.NewProvider("a/b"); !errors.Is(err, ErrInvalidInstance) {
		t.Errorf("NewProvider(bad name) = %v", err)
	}
	p, err := d.NewProvider("api")
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	st := p.Watch(done)
	drain(t, st)
	if err := st.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Watch(done) ended with %v", err)
	}
	if _, err := p.Pick(); !errors.Is(err, ErrProviderClosed) {
		t.Errorf("Pick after Watch(done) = %v", err)
	}
	// Options are fine, nil ones skipped; the session never connected.
	p, err = d.NewProvider("api", nil, WithStrategy(Random()))
	if err != nil {
		t.Fatal(err)
	}
	st = p.Watch(ctx)
	drain(t, st)
	if err := st.Err(); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("Watch on an unconnected session ended with %v", err)
	}
	if _, err := p.Pick(); !errors.Is(err, recipes.ErrNilSession) || !errors.Is(err, ErrProviderClosed) {
		t.Errorf("Pick after that = %v", err)
	}
	st = p.Watch(ctx)
	drain(t, st)
	if err := st.Err(); !errors.Is(err, ErrProviderClosed) {
		t.Errorf("Watch again ended with %v", err)
	}
	// A nil ctx does not use up the Provider.
	p, err = d.NewProvider("api")
	if err != nil {
		t.Fatal(err)
	}
	st = p.Watch(nil) //nolint:staticcheck // a nil ctx on purpose
	drain(t, st)
	if err := st.Err(); !errors.Is(err, recipes.ErrNilContext) {
		t.Errorf("Watch(nil) ended with %v", err)
	}
	st = p.Watch(done)
	drain(t, st)
	if err := st.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Watch(done) after Watch(nil) ended with %v, want ctx's error (not watched before)", err)
	}
}

// drain reads st until C is closed, failing if it delivers a value or
// stays open past a deadline.
func drain(t *testing.T, st *recipes.Stream[[]Instance]) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case v, ok := <-st.C:
			if !ok {
				return
			}
			t.Errorf("stream delivered %v", v)
		case <-deadline:
			st.Stop()
			t.Fatal("stream still open after 10 s")
		}
	}
}

func TestNilReceivers(t *testing.T) {
	ctx := context.Background()
	var d *Discovery
	if _, err := d.Names(ctx); !errors.Is(err, ErrNilReceiver) {
		t.Errorf("Names = %v", err)
	}
	if _, err := d.Register(ctx, Instance{Name: "a", ID: "b"}); !errors.Is(err, ErrNilReceiver) {
		t.Errorf("Register = %v", err)
	}
	if _, err := d.NewProvider("a"); !errors.Is(err, ErrNilReceiver) {
		t.Errorf("NewProvider = %v", err)
	}
	var r *Registration
	if err := r.Update(ctx, Instance{}); !errors.Is(err, ErrNilReceiver) {
		t.Errorf("Update = %v", err)
	}
	if err := r.Leave(ctx); !errors.Is(err, ErrNilReceiver) {
		t.Errorf("Leave = %v", err)
	}
	var p *Provider
	if _, err := p.Pick(); !errors.Is(err, ErrNilReceiver) {
		t.Errorf("Pick = %v", err)
	}
	st := p.Watch(ctx)
	drain(t, st)
	if err := st.Err(); !errors.Is(err, ErrNilReceiver) {
		t.Errorf("Watch ended with %v", err)
	}
	if p.Instances() != nil {
		t.Error("Instances of nil")
	}
	p.NoteError("x")
}
