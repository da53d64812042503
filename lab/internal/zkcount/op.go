package zkcount

import "strconv"

// Op is a ZooKeeper request op code (the second field of a request header).
type Op int32

// Op codes of the ZooKeeper client protocol.
const (
	OpCreate          Op = 1
	OpDelete          Op = 2
	OpExists          Op = 3
	OpGetData         Op = 4
	OpSetData         Op = 5
	OpGetACL          Op = 6
	OpSetACL          Op = 7
	OpGetChildren     Op = 8
	OpSync            Op = 9
	OpPing            Op = 11
	OpGetChildren2    Op = 12
	OpCheck           Op = 13
	OpMulti           Op = 14
	OpCreate2         Op = 15
	OpReconfig        Op = 16
	OpCheckWatches    Op = 17
	OpRemoveWatches   Op = 18
	OpCreateContainer Op = 19
	OpCreateTTL       Op = 21
	OpMultiRead       Op = 22
	OpSetAuth         Op = 100
	OpSetWatches      Op = 101
	OpSASL            Op = 102
	OpGetEphemerals   Op = 103
	OpAddWatch        Op = 106
	OpSetWatches2     Op = 105
	OpClose           Op = -11
)

var opNames = map[Op]string{
	OpCreate:          "create",
	OpDelete:          "delete",
	OpExists:          "exists",
	OpGetData:         "getData",
	OpSetData:         "setData",
	OpGetACL:          "getACL",
	OpSetACL:          "setACL",
	OpGetChildren:     "getChildren",
	OpSync:            "sync",
	OpPing:            "ping",
	OpGetChildren2:    "getChildren2",
	OpCheck:           "check",
	OpMulti:           "multi",
	OpCreate2:         "create2",
	OpReconfig:        "reconfig",
	OpCheckWatches:    "checkWatches",
	OpRemoveWatches:   "removeWatches",
	OpCreateContainer: "createContainer",
	OpCreateTTL:       "createTTL",
	OpMultiRead:       "multiRead",
	OpSetAuth:         "setAuth",
	OpSetWatches:      "setWatches",
	OpSASL:            "sasl",
	OpGetEphemerals:   "getEphemerals",
	OpAddWatch:        "addWatch",
	OpSetWatches2:     "setWatches2",
	OpClose:           "close",
}

// String returns the op's name in ZooKeeper's ZooDefs.OpCode spelling, or
// "op(<n>)" for an unknown code.
func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}
