package recipes

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// validateServers checks a server list before anything is resolved or
// dialed: at least one entry, each "host" (port 2181, go-zookeeper's
// default) or "host:port" ("[v6]:port" for an IPv6 address), the host an IP
// address or a DNS name (letters, digits, '-', '_', '.'), the port a decimal
// number in 1..65535. The error wraps ErrBadArgument and names the entry.
// Pure.
func validateServers(servers []string) error {
	if len(servers) == 0 {
		return fmt.Errorf("%w: no servers", ErrBadArgument)
	}
	for i, srv := range servers {
		if err := validateServer(srv); err != nil {
			return fmt.Errorf("%w: server %d %q: %s", ErrBadArgument, i, srv, err)
		}
	}
	return nil
}

func validateServer(srv string) error {
	host := srv
	if strings.Contains(srv, ":") {
		h, port, err := net.SplitHostPort(srv)
		if err != nil {
			return fmt.Errorf("not host:port: %w", err)
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '+' || port[0] == '0' {
			return fmt.Errorf("port %q is not a number in 1..65535", port)
		}
		if strings.HasPrefix(srv, "[") || strings.Contains(h, ":") {
			// Brackets, and colons in the host, are for an IPv6 address
			// only.
			if a, err := netip.ParseAddr(h); err != nil || !a.Is6() {
				return fmt.Errorf("bad IPv6 address %q", h)
			}
			return nil
		}
		host = h
	}
	switch {
	case host == "":
		return fmt.Errorf("empty host")
	case len(host) > 253:
		return fmt.Errorf("host name longer than 253 bytes")
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	for _, label := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("bad host name %q", host)
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("bad host name %q", host)
			}
		}
	}
	return nil
}
