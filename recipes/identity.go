package recipes

import (
	"fmt"
	"os"
)

// ProcessID identifies this process as "host:pid" ("unknown:pid" when the
// host name cannot be read): the default data of contender, claim and
// liveness nodes, so that an operator listing a path sees who is there.
// Pure but for reading the host name; no ZooKeeper calls.
func ProcessID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}
