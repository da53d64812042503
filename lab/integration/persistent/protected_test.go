package persistent_test

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestCreateProtected: the core's protected create of a free label, which
// WithProtected uses: Curator's and kazoo's names, the owner and czxid it
// reports, and bad input refused before anything is sent.
func TestCreateProtected(t *testing.T) {
	e := ensemble(t)
	s, counter := testutil.CountedSession(t, e.Addrs())
	ctx := ctxT(t, time.Minute)
	parent := testPath(t)
	for _, tc := range []struct {
		d    recipes.Dialect
		name *regexp.Regexp
	}{
		{recipes.Curator, regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-ticket-[0-9]{10}$`)},
		{recipes.Kazoo, regexp.MustCompile(`^[0-9a-f]{32}ticket-[0-9]{10}$`)},
	} {
		p, err := s.CreateProtected(ctx, tc.d, parent, "ticket-", []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		data, st, ok := stat(t, s, p.Path)
		if !ok || string(data) != "x" || st.EphemeralOwner != s.ID() || p.SessionID != s.ID() || p.Czxid != st.Czxid || p.Ambiguous {
			t.Fatalf("%s: %+v: found %v, stat %+v", tc.d, p, ok, st)
		}
		if name := p.Path[len(parent)+1:]; !tc.name.MatchString(name) || !tc.d.HasGUID(name, p.GUID) {
			t.Fatalf("%s: name %s (GUID %s)", tc.d, name, p.GUID)
		}
	}
	before := counter.Snapshot()
	done, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		ctx           context.Context
		parent, label string
		data          []byte
		want          error
	}{
		{ctx, parent, "a/b", nil, recipes.ErrInvalidPath},
		{ctx, "/zookeeper", "a", nil, recipes.ErrInvalidPath},
		{ctx, "rel", "a", nil, recipes.ErrInvalidPath},
		{ctx, parent, "a", make([]byte, s.MaxData()), recipes.ErrDataTooLarge},
		{done, parent, "a", nil, context.Canceled},
	} {
		if _, err := s.CreateProtected(tc.ctx, recipes.Curator, tc.parent, tc.label, tc.data); !errors.Is(err, tc.want) {
			t.Errorf("CreateProtected(%q, %q): %v, want %v", tc.parent, tc.label, err, tc.want)
		}
	}
	if _, err := (*recipes.Session)(nil).CreateProtected(ctx, recipes.Curator, parent, "a", nil); !errors.Is(err, recipes.ErrNilSession) {
		t.Errorf("CreateProtected on a nil session: %v", err)
	}
	if d := counter.Snapshot().Sub(before); d.Total() != 0 {
		t.Errorf("bad input sent %v", d.Requests)
	}
}
