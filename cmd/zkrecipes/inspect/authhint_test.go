package inspect

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

func TestAuthHint(t *testing.T) {
	enforced := errors.New("unknown error: -124") // go-zookeeper v1.0.4's report of code -124
	for _, tc := range []struct {
		name   string
		digest string
		err    error
		want   string // a part of the hint; "" for none
	}{
		{"enforced, no digest", "", fmt.Errorf("list /a: %w", enforced), "give -digest"},
		{"ACL, no digest", "", fmt.Errorf("list /a: %w", zk.ErrNoAuth), "give -digest"},
		{"ACL, digest", "app:pw", fmt.Errorf("revoke /a: %w", zk.ErrNoAuth), "does not grant"},
		{"other error", "", fmt.Errorf("list /a: %w", zk.ErrNoNode), ""},
		{"connection", "app:pw", zk.ErrConnectionClosed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := (&cli{digest: tc.digest}).authHint(tc.err)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("authHint(%v) = %q, want it to contain %q", tc.err, got, tc.want)
			}
		})
	}
}
