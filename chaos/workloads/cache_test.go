package workloads

import (
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/cache"
)

// TestViewDiff: a cache's view equals ZooKeeper's only with the same
// paths, each of the same incarnation (czxid), change (mzxid) and data; a
// node deleted and created again with the same version and data is
// another incarnation (CURATOR-391).
func TestViewDiff(t *testing.T) {
	node := func(p string, czxid, mzxid int64, data string) cache.Node {
		return cache.Node{Path: p, Data: []byte(data), Stat: zk.Stat{Czxid: czxid, Mzxid: mzxid}}
	}
	truth := map[string]truthNode{
		"/d/a": {czxid: 5, mzxid: 5, data: []byte("a")},
		"/d/b": {czxid: 9, mzxid: 9, data: []byte("b")},
	}
	tests := []struct {
		name string
		view []cache.Node
		want string // "" or a part of the difference
	}{
		{"equal", []cache.Node{node("/d/a", 5, 5, "a"), node("/d/b", 9, 9, "b")}, ""},
		{"the old incarnation, same version and data", []cache.Node{node("/d/a", 5, 5, "a"), node("/d/b", 3, 3, "b")}, "/d/b cached as the incarnation of czxid 0x3"},
		{"an older change", []cache.Node{node("/d/a", 5, 4, "a"), node("/d/b", 9, 9, "b")}, "/d/a cached at mzxid 0x4"},
		{"other data", []cache.Node{node("/d/a", 5, 5, "x"), node("/d/b", 9, 9, "b")}, `/d/a cached at mzxid 0x5 ("x")`},
		{"missing", []cache.Node{node("/d/a", 5, 5, "a")}, "/d/b in ZooKeeper, not cached"},
		{"extra", []cache.Node{node("/d/a", 5, 5, "a"), node("/d/b", 9, 9, "b"), node("/d/c", 11, 11, "c")}, "/d/c cached, not in ZooKeeper"},
	}
	for _, tt := range tests {
		got := viewDiff(tt.view, truth)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
