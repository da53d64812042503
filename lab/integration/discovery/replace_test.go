package discovery_test

import (
	"fmt"
	"github.com/zkrecipes/zkrecipes/lab/internal/testutil"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/zkrecipes/discovery"
)

// TestProviderFollowsReplacedNode: a node replaced in one multi (delete and
// create, as Register does over another's node) fires a NodeDeleted on the
// node and a child change on the service, in either order; the Provider must
// end with the new instance every time. The chaos suite's discovery workload
// found it dropping the instance when the deletion was handled after a
// listing that already showed the node again (225 of 300 replacements), and
// never reading again a node found gone by its read but back before the
// next listing.
func TestProviderFollowsReplacedNode(t *testing.T) {
	e := ensemble(t)
	ctx := ctxT(t, 5*time.Minute)
	s := connect(t, e.Addrs())
	base := basePath(t)
	d := newDiscovery(t, s, base)
	raw := connect(t, e.Addrs()).Conn()
	inst := func(v int) []byte {
		b, err := discovery.Marshal(discovery.Instance{Name: "svc", ID: "x", Payload: []byte(fmt.Sprint(v)), ServiceType: discovery.Static})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	path := base + "/svc/x"
	r := register(t, d, discovery.Instance{Name: "svc", ID: "y", ServiceType: discovery.Static})
	defer r.Leave(ctx)
	if _, err := raw.Create(path, inst(0), 0, testutil.ACL()); err != nil {
		t.Fatal(err)
	}
	defer raw.Delete(path, -1)
	p := newProvider(t, d, "svc")
	has := func(v int) bool {
		for _, in := range p.Instances() {
			if in.ID == "x" && string(in.Payload) == fmt.Sprint(v) {
				return true
			}
		}
		return false
	}
	for i := 1; i <= 50; i++ {
		_, st, err := raw.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Multi(&zk.DeleteRequest{Path: path, Version: st.Version}, &zk.CreateRequest{Path: path, Data: inst(i), Acl: testutil.ACL()}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, fmt.Sprintf("replacement %d seen by the provider", i), func() bool { return has(i) })
	}
}
