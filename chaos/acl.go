package chaos

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/checkers"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// CheckerSecuredACL names the result a run with digest credentials adds
// to every scenario: every node the scenario made carries the ACL of the
// run's user (all for that digest identity, read for anyone; what
// recipes.DefaultAuthACL becomes on the server), and nothing more.
const CheckerSecuredACL = "secured-acl"

// aclSampler reads the ACL of every node under a scenario's root while the
// workload runs (ephemeral nodes do not outlive it): every 250 ms it walks
// the tree and reads the ACL of each path it has not read yet, up to 200
// new paths per pass. Cost per pass: a getChildren per node and a getACL
// per new node (a workload that keeps thousands of nodes pays a walk of
// them four times a second on a secured run). Invariant: seen holds each path's first ACL read, or none
// when the node went before its read.
type aclSampler struct {
	conn *zk.Conn
	want []zk.ACL
	mu   sync.Mutex
	seen map[string][]zk.ACL
	errs int
}

func newACLSampler(conn *zk.Conn, want []zk.ACL) *aclSampler {
	return &aclSampler{conn: conn, want: want, seen: map[string][]zk.ACL{}}
}

// run samples until ctx is done (a pass at once, then every 250 ms).
func (s *aclSampler) run(ctx context.Context, root string) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		s.pass(root)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *aclSampler) pass(root string) {
	budget := 200
	var walk func(p string)
	walk = func(p string) {
		s.mu.Lock()
		_, done := s.seen[p]
		s.mu.Unlock()
		if !done && budget > 0 {
			budget--
			acl, _, err := s.conn.GetACL(p)
			s.mu.Lock()
			switch {
			case err == nil:
				s.seen[p] = acl
			case !errors.Is(err, zk.ErrNoNode):
				s.errs++
			}
			s.mu.Unlock()
		}
		kids, _, err := s.conn.Children(p)
		if err != nil {
			return
		}
		for _, k := range kids {
			walk(path.Join(p, k))
		}
	}
	walk(root)
}

// result judges every ACL read: one that is not exactly want is a
// violation. No node read at all is inconclusive.
func (s *aclSampler) result() checkers.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := checkers.Result{Checker: CheckerSecuredACL, Checked: len(s.seen)}
	paths := make([]string, 0, len(s.seen))
	for p := range s.seen {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if !sameACL(s.seen[p], s.want) {
			r.Violations = append(r.Violations, checkers.Violation{Time: history.Now(), Client: history.RunnerClient,
				Msg: fmt.Sprintf("%s has ACL %s, want %s", p, formatACL(s.seen[p]), formatACL(s.want))})
		}
	}
	if r.Checked == 0 {
		r.Inconclusive = true
		r.Note = "no node's ACL was read"
	}
	if s.errs > 0 {
		r.Note = strings.TrimPrefix(r.Note+fmt.Sprintf("; %d reads failed (connection)", s.errs), "; ")
	}
	return r
}

// sameACL reports whether a and b hold the same entries, in any order.
func sameACL(a, b []zk.ACL) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(x zk.ACL) string { return fmt.Sprintf("%s:%s:%d", x.Scheme, x.ID, x.Perms) }
	count := map[string]int{}
	for _, x := range a {
		count[key(x)]++
	}
	for _, x := range b {
		count[key(x)]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// formatACL shows an ACL as scheme:id:perms entries, a digest id without
// its hash.
func formatACL(acl []zk.ACL) string {
	out := make([]string, len(acl))
	for i, a := range acl {
		id := a.ID
		if a.Scheme == "digest" {
			user, _, _ := strings.Cut(id, ":")
			id = user + ":<hash>"
		}
		out[i] = fmt.Sprintf("%s:%s:%d", a.Scheme, id, a.Perms)
	}
	return strings.Join(out, ",")
}
