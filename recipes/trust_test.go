package recipes

import "testing"

// TestTrustsKnownList: which waiters may conclude that they hold from the
// list they already have (no node can have appeared ahead of them).
func TestTrustsKnownList(t *testing.T) {
	r := func(seq int32) Contender { return Contender{Role: RoleRead, Seq: seq} }
	w := func(seq int32) Contender { return Contender{Role: RoleWrite, Seq: seq} }
	l := func(seq int32) Contender { return Contender{Role: RoleLock, Seq: seq} }
	tests := []struct {
		name string
		spec Spec
		cs   []Contender
		self int
		want bool
	}{
		{"curator mutex", Spec{Dialect: Curator, Role: RoleLock, Predicate: Exclusive()}, []Contender{l(3)}, 0, true},
		{"curator latch", Spec{Dialect: Curator, Role: RoleLatch, Predicate: Exclusive()}, []Contender{{Role: RoleLatch}}, 0, true},
		{"curator semaphore", Spec{Dialect: Curator, Role: RoleLease, Predicate: FirstN(2)}, []Contender{{Role: RoleLease}, {Role: RoleLease}}, 1, true},
		{"curator writer first", Spec{Dialect: Curator, Role: RoleWrite, Predicate: Exclusive()}, []Contender{w(3)}, 0, false},
		{"curator reader behind readers", Spec{Dialect: Curator, Role: RoleRead, Predicate: Read()}, []Contender{r(1), r(2), r(3)}, 2, true},
		{"curator reader first", Spec{Dialect: Curator, Role: RoleRead, Predicate: Read()}, []Contender{r(3)}, 0, true},
		{"curator reader with exclusive predicate", Spec{Dialect: Curator, Role: RoleRead, Predicate: Exclusive()}, []Contender{r(3)}, 0, false},
		// At most one unsequenced read node exists at a time (see
		// trustsKnownList): one more ahead still leaves us within 2.
		{"curator reader first with semaphore(2) predicate", Spec{Dialect: Curator, Role: RoleRead, Predicate: FirstN(2)}, []Contender{r(3)}, 0, true},
		{"curator reader second with semaphore(2) predicate", Spec{Dialect: Curator, Role: RoleRead, Predicate: FirstN(2)}, []Contender{r(1), r(3)}, 1, false},
		{"kazoo writer first", Spec{Dialect: Kazoo, Role: RoleWrite, Predicate: Exclusive()}, []Contender{w(3)}, 0, true},
		{"kazoo reader", Spec{Dialect: Kazoo, Role: RoleRead, Predicate: Read()}, []Contender{r(1), r(3)}, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := trustsKnownList(&tt.spec, tt.cs, tt.self); got != tt.want {
				t.Fatalf("trustsKnownList = %v, want %v", got, tt.want)
			}
		})
	}
}
