package testenv

import (
	"fmt"
	"strings"
	"time"
)

// peer is how one server reaches another (or, for itself, where it binds)
// for quorum traffic (followers to the leader) and leader election.
type peer struct {
	host     string
	quorum   int
	election int
}

// zooCfg is what differs between the servers' zoo.cfg files.
type zooCfg struct {
	tick       time.Duration
	maxSession time.Duration
	dataDir    string
	clientAddr string // host the client port binds to; "" binds all
	clientPort int
	// secure makes the client port TLS-only: secureClientPort (and
	// secureClientPortAddress) instead of clientPort.
	secure bool
	// peers[j] is how this server reaches server j (j = myid-1). With one
	// peer the server runs standalone.
	peers []peer
	// localSessions turns on local sessions (Config.LocalSessions).
	localSessions bool
	// listenAll binds quorum and election ports on every address instead
	// of the host named in this server's own peers entry.
	listenAll bool
}

// SyncLimit is the ensembles' syncLimit, in ticks: a follower that hears
// nothing from its leader for SyncLimit ticks (1 s at the default 200 ms
// tick) leaves it and closes its clients' connections, and the leader drops
// a follower as silent. Sessions must tell the library (see
// Ensemble.Timing and recipes.WithEnsembleTiming): their lease allows for
// it. 5 ticks survive a loaded 2-core machine and keep the lease of a 3 s
// session comfortable; 10 left a 3 s session almost no lease.
const SyncLimit = 5

// render returns the zoo.cfg text. Limits are in ticks: a follower has 50
// ticks to sync at start and SyncLimit ticks per request afterwards.
func (z zooCfg) render() string {
	var b strings.Builder
	w := func(k string, v any) { fmt.Fprintf(&b, "%s=%v\n", k, v) }
	w("tickTime", z.tick.Milliseconds())
	w("initLimit", 50)
	w("syncLimit", SyncLimit)
	w("dataDir", z.dataDir)
	port, addr := "clientPort", "clientPortAddress"
	if z.secure {
		port, addr = "secureClientPort", "secureClientPortAddress"
	}
	if z.clientAddr != "" {
		w(addr, z.clientAddr)
	}
	w(port, z.clientPort)
	w("maxSessionTimeout", z.maxSession.Milliseconds())
	w("maxClientCnxns", 0)
	w("4lw.commands.whitelist", "*")
	w("admin.enableServer", false)
	w("autopurge.purgeInterval", 0)
	w("reconfigEnabled", false)
	if z.localSessions {
		w("localSessionsEnabled", true)
		w("localSessionsUpgradingEnabled", true)
	}
	if len(z.peers) > 1 {
		w("standaloneEnabled", false)
		w("quorumListenOnAllIPs", z.listenAll)
		for j, p := range z.peers {
			w(fmt.Sprintf("server.%d", j+1), fmt.Sprintf("%s:%d:%d:participant", p.host, p.quorum, p.election))
		}
	}
	return b.String()
}
