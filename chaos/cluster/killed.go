package cluster

import (
	"sync"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// killedPIDs holds the worker processes the kill-client fault killed, so
// that their workload starts new ones instead of failing.
var killedPIDs sync.Map

// MarkKilled notes that pid is about to be killed, and when; UnmarkKilled
// forgets it (the kill failed, or its workload took note).
func MarkKilled(pid int)   { killedPIDs.Store(pid, history.Now()) }
func UnmarkKilled(pid int) { killedPIDs.Delete(pid) }

// KilledByFault reports whether the kill-client fault killed pid, and
// when (history clock).
func KilledByFault(pid int) (int64, bool) {
	at, ok := killedPIDs.Load(pid)
	if !ok {
		return 0, false
	}
	return at.(int64), true
}

// RecordKilled records, for client whose process was killed at time at,
// the loss of every holding it still had: a dead process believes nothing,
// so its holding ends at its death.
func RecordKilled(env *Env, client string, at int64) {
	for _, hd := range history.Holdings(env.Rec.History()) {
		if hd.Client == client && hd.Ended == "" {
			env.Rec.Add(history.Event{Time: max(at, hd.From), Client: client, Kind: history.KindLost, Key: hd.Key, Token: hd.Token,
				Detail: "process killed (kill-client)"})
		}
	}
}
