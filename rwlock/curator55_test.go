package rwlock_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/zkrecipes/zkrecipes/recipes"
)

// TestCurator55ReadNodeParses: the downgrade's read node, which has no
// sequence of its own but ends with the write node's ten digits, parses as
// a reader at that sequence in the Curator dialect.
func TestCurator55ReadNodeParses(t *testing.T) {
	guid := uuid.NewString()
	name := "_c_" + guid + "-__READ__0000000042"
	c, ok := recipes.Curator.Parse(name, recipes.Curator.Blocking(recipes.RoleWrite)...)
	if !ok || c.Role != recipes.RoleRead || c.Seq != 42 || c.GUID != guid {
		t.Fatalf("Parse(%q) = %+v, %v; want a reader at 42 with GUID %s", name, c, ok, guid)
	}
}
