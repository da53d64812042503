package cluster

import (
	"context"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// SampleSessions records, until ctx is done, every change of each client's
// session as the runner sees it every 20 ms: a connection that stops having
// a session ("suspended"), gets it back ("connected"), or a new session id
// ("new", Value = the id, Arg = the expired one it replaced, for clients
// in worker processes too). These are
// the suspensions and expiries the clients went through (see
// checkers.Exercised).
func SampleSessions(ctx context.Context, env *Env) {
	type seen struct {
		id        int64
		connected bool
	}
	last := map[string]seen{}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, c := range env.ClientList() {
			now := seen{id: c.Session(), connected: true}
			conn := c.conn.Load()
			if conn != nil {
				now.connected = conn.State() == zk.StateHasSession
			}
			before, ok := last[c.Name]
			if now.id == 0 {
				// go-zookeeper reports id 0 between an expiry and the new
				// session: keep the last id, so the new one still differs.
				now.id = before.id
			}
			last[c.Name] = now
			if !ok || ctx.Err() != nil {
				continue
			}
			if before.id != 0 && now.id != 0 && now.id != before.id {
				env.Rec.Add(history.Event{Client: c.Name, Kind: history.KindSession, Value: now.id, Arg: before.id, Detail: "new"})
			}
			if conn != nil && before.connected != now.connected {
				d := "suspended"
				if now.connected {
					d = "connected"
				}
				env.Rec.Add(history.Event{Client: c.Name, Kind: history.KindSession, Detail: d})
			}
		}
	}
}
