package testenv

import "errors"

// Errors returned by testenv; match them with errors.Is.
var (
	// ErrConfig reports a Config that cannot describe an ensemble.
	ErrConfig = errors.New("testenv: invalid config")
	// ErrServer reports a server index outside the ensemble.
	ErrServer = errors.New("testenv: no such server")
	// ErrNoDocker reports that the containers backend was asked for but no
	// Docker engine answers.
	ErrNoDocker = errors.New("testenv: no Docker engine answers")
	// ErrNoZooKeeper reports that the processes backend found no Java or no
	// ZooKeeper installation.
	ErrNoZooKeeper = errors.New("testenv: no local ZooKeeper installation")
	// ErrNoLeader reports that no server is the ZooKeeper leader.
	ErrNoLeader = errors.New("testenv: no server leads")
	// ErrClosed reports a call on a closed ensemble or link.
	ErrClosed = errors.New("testenv: closed")
	// ErrVersion reports servers that run another ZooKeeper release than
	// Config.Version asks for.
	ErrVersion = errors.New("testenv: servers run another ZooKeeper release")
	// ErrImage reports that the ZooKeeper image could not be built.
	ErrImage = errors.New("testenv: cannot build the ZooKeeper image")
	// ErrTLS reports that the key stores of a TLS ensemble could not be
	// made (typically: no JDK keytool).
	ErrTLS = errors.New("testenv: cannot make the TLS key stores")
	// ErrUnsupported reports a fault the ensemble's configuration rules
	// out, such as CutAfterNextFrame on a TLS ensemble.
	ErrUnsupported = errors.New("testenv: not supported on this ensemble")
)
