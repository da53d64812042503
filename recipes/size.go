package recipes

import (
	"fmt"

	"github.com/go-zookeeper/zk"
)

// The server reads a request as one frame: a 4-byte length, then that many
// bytes. A frame longer than its jute.maxbuffer (DefaultMaxData unless the
// server is configured otherwise) is not answered: the server closes the
// connection, go-zookeeper reconnects, and a retried request fails the same
// way until the caller gives up. Measured on ZooKeeper 3.8 with the default
// limit: create, setData, multi and exists frames of exactly 0xfffff bytes
// are accepted, 0xfffff+1 bytes close the connection. So every write the
// recipes send is measured here first, and refused with ErrDataTooLarge.
//
// The sizes below are jute's encoding as go-zookeeper writes it, without
// the 4-byte length prefix: ints 4 bytes, a bool 1 byte, a string or byte
// buffer 4 bytes of length then its bytes (a nil buffer: length -1, 4
// bytes), a vector 4 bytes of count then its elements.

const (
	reqHeaderSize   = 4 + 4     // xid, opcode
	multiHeaderSize = 4 + 1 + 4 // type, done, err: before each op and once at the end
	readTail        = 1         // the watch flag of exists, getData, getChildren
)

func strSize(s string) int { return 4 + len(s) }
func bufSize(b []byte) int { return 4 + len(b) }
func aclSize(acl []zk.ACL) int {
	n := 4
	for _, a := range acl {
		n += 4 + strSize(a.Scheme) + strSize(a.ID)
	}
	return n
}

// nilOp reports whether op is nil or a nil pointer to a request type
// (a typed nil, such as (*zk.CreateRequest)(nil)): not a request to size or
// send. Pure.
func nilOp(op any) bool {
	switch o := op.(type) {
	case nil:
		return true
	case *zk.CreateRequest:
		return o == nil
	case *zk.SetDataRequest:
		return o == nil
	case *zk.DeleteRequest:
		return o == nil
	case *zk.CheckVersionRequest:
		return o == nil
	}
	return false
}

// opBodySize is the encoded size of one write request's body.
func opBodySize(op any) (int, error) {
	if nilOp(op) {
		return 0, fmt.Errorf("%w: nil op (%T)", ErrBadArgument, op)
	}
	switch o := op.(type) {
	case *zk.CreateRequest:
		return strSize(o.Path) + bufSize(o.Data) + aclSize(o.Acl) + 4, nil
	case *zk.SetDataRequest:
		return strSize(o.Path) + bufSize(o.Data) + 4, nil
	case *zk.DeleteRequest:
		return strSize(o.Path) + 4, nil
	case *zk.CheckVersionRequest:
		return strSize(o.Path) + 4, nil
	}
	return 0, fmt.Errorf("%w: unsupported op %T", ErrBadArgument, op)
}

// RequestSize returns the size of op sent alone (as create, createContainer,
// setData, delete or check) on the wire, which is what the server compares
// with its limit: request header, path, data, ACLs, flags or version. op is
// a *zk.CreateRequest, *zk.SetDataRequest, *zk.DeleteRequest or
// *zk.CheckVersionRequest; anything else, nil or a typed nil such as
// (*zk.CreateRequest)(nil) included, is ErrBadArgument. Pure.
func RequestSize(op any) (int, error) {
	n, err := opBodySize(op)
	if err != nil {
		return 0, err
	}
	return reqHeaderSize + n, nil
}

// MultiSize returns the size of a multi of ops on the wire: request header,
// one op header and body per op, and the closing header. Ops are as for
// RequestSize. Pure.
func MultiSize(ops ...any) (int, error) {
	n := reqHeaderSize + multiHeaderSize
	for _, op := range ops {
		b, err := opBodySize(op)
		if err != nil {
			return 0, err
		}
		n += multiHeaderSize + b
	}
	return n, nil
}

// authRequestSize is the size of a setAuth request on the wire: header,
// type, scheme, and the auth bytes (n of them). Pure.
func authRequestSize(scheme string, n int) int {
	return reqHeaderSize + 4 + strSize(scheme) + 4 + n
}

// ReadSize returns the size of an exists, getData or getChildren request of
// path on the wire (watch or not). Pure.
func ReadSize(path string) int { return reqHeaderSize + strSize(path) + readTail }

// CheckRequest returns an error wrapping ErrDataTooLarge when op, sent
// alone, is larger than limit bytes on the wire (DefaultMaxData when limit
// <= 0), and RequestSize's error for an op it cannot measure. Pure.
func CheckRequest(limit int, op any) error {
	n, err := RequestSize(op)
	if err != nil {
		return err
	}
	return checkSize("request", n, limit)
}

// CheckMulti is CheckRequest for a multi of ops. Pure.
func CheckMulti(limit int, ops ...any) error {
	n, err := MultiSize(ops...)
	if err != nil {
		return err
	}
	return checkSize(fmt.Sprintf("multi of %d ops", len(ops)), n, limit)
}

func checkSize(what string, n, limit int) error {
	if limit <= 0 {
		limit = DefaultMaxData
	}
	if n > limit {
		return fmt.Errorf("%w: %s is %d bytes on the wire, server limit %d", ErrDataTooLarge, what, n, limit)
	}
	return nil
}
