package inspect

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// fakeTree is a Reader over a fixed tree: path -> data; children derive
// from the paths; owners maps a path to its ephemeral owner. listedOnly
// names children that are listed but gone when read.
type fakeTree struct {
	data       map[string]string
	owners     map[string]int64
	listedOnly map[string]bool
}

func (f *fakeTree) Children(p string) ([]string, *zk.Stat, error) {
	if _, ok := f.data[p]; !ok {
		return nil, nil, zk.ErrNoNode
	}
	var out []string
	prefix := p + "/"
	for q := range f.data {
		if rest, ok := strings.CutPrefix(q, prefix); ok && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	for q := range f.listedOnly {
		if rest, ok := strings.CutPrefix(q, prefix); ok {
			out = append(out, rest)
		}
	}
	return out, &zk.Stat{}, nil
}

func (f *fakeTree) Get(p string) ([]byte, *zk.Stat, error) {
	d, ok := f.data[p]
	if !ok {
		return nil, nil, zk.ErrNoNode
	}
	return []byte(d), &zk.Stat{Ctime: 1000, EphemeralOwner: f.owners[p]}, nil
}

func TestInspectFindings(t *testing.T) {
	now := func() time.Time { return time.UnixMilli(4000) }
	ctx := context.Background()

	// A queue whose claim names an item no longer queued; one item listed
	// but deleted before it was read.
	q := &fakeTree{
		data: map[string]string{"/q": "", "/q/qn-0000000001": "a", "/q/taken": "",
			"/q/taken/qn-0000000001": "w1", "/q/taken/qn-0000000000": "w0"},
		owners:     map[string]int64{"/q/taken/qn-0000000001": 7, "/q/taken/qn-0000000000": 9},
		listedOnly: map[string]bool{"/q/qn-0000000002": true},
	}
	rep, err := Inspect(ctx, q, "/q", Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ApplyLiveness(rep, Liveness{Connected: map[int64]bool{7: true}, Known: true, Members: 1, Asked: 1})
	if rep.Kind != KindQueue || rep.Depth != 2 || len(rep.Items) != 2 || rep.Items[0].Age != Duration(3*time.Second) || !rep.Items[1].Gone {
		t.Fatalf("queue: %+v", rep)
	}
	var why []string
	for _, f := range rep.Stale {
		why = append(why, f.Path+": "+f.Why)
	}
	joined := strings.Join(why, "\n")
	if len(rep.Stale) != 2 || !strings.Contains(joined, "/q/taken/qn-0000000000: claim on an item that is no longer queued") ||
		!strings.Contains(joined, "/q/taken/qn-0000000000: owner session 0x9 is connected to no server of the ensemble") {
		t.Errorf("stale:\n%s", joined)
	}

	// "ready" with no member left.
	b := &fakeTree{data: map[string]string{"/b": "", "/b/ready": ""}}
	rep, err = Inspect(ctx, b, "/b", Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != KindDoubleBarrier || !rep.Ready || len(rep.Stale) != 1 || rep.Stale[0].Path != "/b/ready" || rep.Sessions.Known {
		t.Errorf("barrier: %+v", rep)
	}

	// MaxNodes bounds the nodes read and says so.
	l := &fakeTree{data: map[string]string{"/l": ""}}
	for _, n := range []string{"0000000001", "0000000002", "0000000003"} {
		l.data["/l/_c_"+g1+"-lock-"+n] = n
	}
	rep, err = Inspect(ctx, l, "/l", Options{Now: now, MaxNodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Contenders) != 2 || !rep.Truncated || rep.Contenders[0].Data != "0000000001" || !rep.Contenders[0].Holds {
		t.Errorf("truncated lock: %+v", rep)
	}

	// A twophase root; a bad path; a done context.
	tp := &fakeTree{data: map[string]string{"/r": "", "/r/t1": "p", "/r/t1/s1": "", "/r/t1/s1/vote": "commit", "/r/t1/s2": "",
		"/r/t0": "", "/r/t0/decision": "abort\ntimeout", "/r/t0/s1": "", "/r/t0/s1/done": ""}}
	rep, err = Inspect(ctx, tp, "/r", Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != KindTwoPhase || len(rep.Transactions) != 2 || rep.Transactions[0].ID != "t1" || rep.Transactions[1].Decision != "abort\ntimeout" ||
		len(rep.Stale) != 1 || rep.Stale[0].Path != "/r/t1/s2" {
		t.Errorf("twophase: %+v", rep)
	}
	if _, err := Inspect(ctx, tp, "r/", Options{}); !errors.Is(err, ErrBadPath) {
		t.Errorf("bad path: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Inspect(done, tp, "/r", Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("done ctx: %v", err)
	}
}

// A claim on an item missing from the listing is stale only if the item is
// missing when read again: a claim on an item put after the items were
// listed is not.
func TestInspectClaimOnLaterItem(t *testing.T) {
	// The listing of /q (before the item came) has no item; /q/qn-0000000003
	// exists by the time it is read again.
	f := &laterItem{fakeTree: fakeTree{data: map[string]string{"/q": "", "/q/taken": "", "/q/taken/qn-0000000003": "w",
		"/q/qn-0000000003": "late"}}, hide: "qn-0000000003"}
	rep, err := Inspect(context.Background(), f, "/q", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != KindQueue || len(rep.Claims) != 1 || len(rep.Stale) != 0 {
		t.Errorf("report %+v, want the claim and no stale finding", rep)
	}
}

// laterItem hides one child of the path from the first listing of it.
type laterItem struct {
	fakeTree
	hide   string
	listed bool
}

func (f *laterItem) Children(p string) ([]string, *zk.Stat, error) {
	cs, st, err := f.fakeTree.Children(p)
	if p == "/q" && !f.listed {
		f.listed = true
		cs = slices.DeleteFunc(cs, func(c string) bool { return c == f.hide })
	}
	return cs, st, err
}

// "/app" with a "locks" child that holds applications' lock paths (the
// docs/command.md's layout) is no semaphore; nor is a "leases" beside strangers.
func TestInspectAppLayout(t *testing.T) {
	app := &fakeTree{data: map[string]string{"/app": "", "/app/locks": "", "/app/locks/report": "", "/app/locks/catalog": "",
		"/app/leader": "", "/app/jobs": ""}}
	rep, err := Inspect(context.Background(), app, "/app", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != KindUnknown || !slices.Equal(rep.Foreign, []string{"jobs", "leader", "locks"}) {
		t.Errorf("/app: %+v", rep)
	}
	only := &fakeTree{data: map[string]string{"/app": "", "/app/locks": "", "/app/locks/report": ""}}
	if rep, err := Inspect(context.Background(), only, "/app", Options{}); err != nil || rep.Kind != KindUnknown {
		t.Errorf("/app with locks only: %+v, %v", rep, err)
	}
	sem := &fakeTree{data: map[string]string{"/s": "", "/s/leases": "2", "/s/locks": "",
		"/s/leases/_c_" + g1 + "-lease-0000000000": "a", "/s/locks/_c_" + g2 + "-lock-0000000001": "b"},
		owners: map[string]int64{"/s/leases/_c_" + g1 + "-lease-0000000000": 5, "/s/locks/_c_" + g2 + "-lock-0000000001": 6}}
	rep, err = Inspect(context.Background(), sem, "/s", Options{})
	if err != nil || rep.Kind != KindSemaphore || rep.Max != 2 || len(rep.Leases) != 1 || len(rep.Contenders) != 1 || !rep.Contenders[0].Holds {
		t.Errorf("semaphore: %+v, %v", rep, err)
	}
}
