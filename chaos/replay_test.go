package chaos

import (
	"testing"
	"time"
)

func TestDefaultReplay(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"defaults", Config{}, "go run ./lab/cmd/zkchaos -tier quick -duration 12s -session-timeout 3s -clients 4"},
		{"external servers, credentials redacted", Config{Tier: "full", Duration: 90 * time.Second, Servers: []string{"a:2181", "b:2181"},
			Digest: "app:s3cret", TLSCA: "/etc/zk ca.pem", Secure: true},
			"go run ./lab/cmd/zkchaos -tier full -duration 1m30s -session-timeout 3s -clients 4 -secure -servers a:2181,b:2181 -tls-ca '/etc/zk ca.pem' -digest 'app:[REDACTED]'"},
		{"given", Config{Replay: "zkchaos -tier quick -v"}, "zkchaos -tier quick -v"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.cfg.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			if c.Replay != tt.want {
				t.Fatalf("replay %q, want %q", c.Replay, tt.want)
			}
		})
	}
}
