package inspect

import (
	"strconv"
	"strings"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// ZooKeeper's own recipes (the zookeeper-recipes jars) name their nodes
// differently from Curator and kazoo, and no package of this module speaks
// their dialect for locks or elections, so they are parsed here:
//
//   - WriteLock (org.apache.zookeeper.recipes.lock): EPHEMERAL_SEQUENTIAL
//     "x-<session id, decimal>-<seq10>", ordered by sequence; the head holds.
//   - LeaderElectionSupport (org.apache.zookeeper.recipes.leader):
//     EPHEMERAL_SEQUENTIAL "n_<seq10>", data = the host name; the head leads.
//
// Its queue ("qn-<seq10>") is the Curator dialect's queue and needs nothing
// here.

// zkWriteLock parses "x-<session>-<seq>". Pure.
func zkWriteLock(name string) (recipes.Contender, bool) {
	rest, ok := strings.CutPrefix(name, "x-")
	if !ok {
		return recipes.Contender{}, false
	}
	for _, n := range []int{10, 11} {
		if len(rest) < n+2 || rest[len(rest)-n-1] != '-' {
			continue
		}
		seq, ok := recipes.ParseSeq(rest[len(rest)-n:])
		if !ok {
			continue
		}
		if _, err := strconv.ParseInt(rest[:len(rest)-n-1], 10, 64); err != nil {
			continue
		}
		return recipes.Contender{Name: name, Role: recipes.RoleLock, Seq: seq}, true
	}
	return recipes.Contender{}, false
}

// zkElection parses "n_<seq>". Pure.
func zkElection(name string) (recipes.Contender, bool) {
	rest, ok := strings.CutPrefix(name, "n_")
	if !ok {
		return recipes.Contender{}, false
	}
	seq, ok := recipes.ParseSeq(rest)
	if !ok {
		return recipes.Contender{}, false
	}
	return recipes.Contender{Name: name, Role: recipes.RoleLatch, Seq: seq}, true
}
