package discovery_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/lab/internal/zkcount"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// Constructors and the checks of Register, Update and NewProvider refuse
// bad input on a live session without sending anything.
func TestBadInputSendsNothing(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, time.Minute)
	s, c := testutil.CountedSession(t, e.Addrs())
	d := newDiscovery(t, s, basePath(t))
	before := c.Snapshot()
	r := register(t, d, discovery.Instance{Name: "api", ID: "ok"})
	settle(t, c, before, zkcount.OpExists, 1) // the keeper's watch
	before = c.Snapshot()

	if _, err := discovery.New(nil, "/x"); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("New(nil) = %v", err)
	}
	for _, p := range []string{"", "x", "/x/", "/zookeeper/x", "/" + strings.Repeat("x", recipes.MaxPathLen)} {
		if _, err := discovery.New(s, p); !errors.Is(err, recipes.ErrInvalidPath) {
			t.Errorf("New(%.20q) = %v, want ErrInvalidPath", p, err)
		}
	}
	for _, inst := range []discovery.Instance{
		{ID: "x"}, {Name: "api"}, {Name: "a/b", ID: "x"}, {Name: "api", ID: "x", Port: -1},
		{Name: "api", ID: "x", ServiceType: discovery.DynamicSequential},
		{Name: "api", ID: "x", Payload: json.RawMessage(`[1]`)},
	} {
		if _, err := d.Register(ctx, inst); !errors.Is(err, discovery.ErrInvalidInstance) {
			t.Errorf("Register(%+v) = %v, want ErrInvalidInstance", inst, err)
		}
	}
	big := discovery.Instance{Name: "api", ID: "big", Payload: json.RawMessage(`"` + strings.Repeat("x", s.MaxData()) + `"`)}
	if _, err := d.Register(ctx, big); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("Register too large = %v", err)
	}
	if _, err := d.Register(ctx, discovery.Instance{Name: "api", ID: "ok"}); !errors.Is(err, discovery.ErrAlreadyRegistered) {
		t.Errorf("Register twice = %v", err)
	}
	inst := r.Instance()
	inst.ID = "other"
	if err := r.Update(ctx, inst); !errors.Is(err, discovery.ErrInvalidInstance) {
		t.Errorf("Update of another id = %v", err)
	}
	big.ID = "ok"
	if err := r.Update(ctx, big); !errors.Is(err, recipes.ErrDataTooLarge) {
		t.Errorf("Update too large = %v", err)
	}
	for _, opt := range []discovery.ProviderOption{discovery.WithStrategy(nil), discovery.WithFilter(nil), discovery.WithDownPolicy(-time.Second, 1)} {
		if _, err := d.NewProvider("api", opt); !errors.Is(err, recipes.ErrBadArgument) {
			t.Errorf("NewProvider with a bad option = %v", err)
		}
	}
	if _, err := d.NewProvider(""); !errors.Is(err, discovery.ErrInvalidInstance) {
		t.Errorf("NewProvider of no name = %v", err)
	}
	if _, err := d.Instances(ctx, "a/b"); !errors.Is(err, discovery.ErrInvalidInstance) {
		t.Errorf("Instances(a/b) = %v", err)
	}
	if sent := c.Snapshot().Sub(before); sent.Total() != 0 {
		t.Fatalf("bad input sent %v", sent.Requests)
	}
	if err := r.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}
