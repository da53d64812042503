package chaos

import "sync"

// killedPIDs holds the worker processes the kill-client fault killed, so
// that their workload starts new ones instead of failing.
var killedPIDs sync.Map

// markKilled notes that pid is about to be killed, and when.
func markKilled(pid int)   { killedPIDs.Store(pid, Now()) }
func unmarkKilled(pid int) { killedPIDs.Delete(pid) }

// killedByFault reports whether the kill-client fault killed pid, and
// when (history clock).
func killedByFault(pid int) (int64, bool) {
	at, ok := killedPIDs.Load(pid)
	if !ok {
		return 0, false
	}
	return at.(int64), true
}

// recordKilled records, for client whose process was killed at time at,
// the loss of every holding it still had: a dead process believes nothing,
// so its holding ends at its death.
func recordKilled(env *Env, client string, at int64) {
	for _, hd := range Holdings(env.Rec.History()) {
		if hd.Client == client && hd.Ended == "" {
			env.Rec.Add(Event{Time: max(at, hd.From), Client: client, Kind: KindLost, Key: hd.Key, Token: hd.Token,
				Detail: "process killed (kill-client)"})
		}
	}
}
