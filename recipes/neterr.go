package recipes

import (
	"errors"
	"io"
	"net"
)

// isNetErr reports transport errors go-zookeeper passes through unchanged
// (a failed write returns the socket error itself).
func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}
