package workloads

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/cluster"
)

// A worker's spec carries the scenario's security as the worker needs it,
// and nothing for a plain scenario.
func TestWorkerSecurity(t *testing.T) {
	if ws := specSecurity(cluster.Security{}); ws != nil {
		t.Fatalf("plain scenario: %+v", ws)
	}
	// A plain scenario's worker still needs the ensemble timing: without
	// it its 3 s sessions have no lease and acquire nothing (the
	// lock-proc scenarios made no progress).
	if opts, err := (*workerSecurity)(nil).options(); err != nil || len(opts) != 1 {
		t.Fatalf("nil security: %d options, %v (want the ensemble timing alone)", len(opts), err)
	}
	ws := specSecurity(cluster.Security{TLS: &tls.Config{ServerName: "zk.example"}, CAPEM: []byte("pem"), User: "u", Password: "p"})
	raw, _ := json.Marshal(workerSpec{Security: ws})
	var back workerSpec
	if err := json.Unmarshal(raw, &back); err != nil || back.Security == nil || *back.Security != *ws {
		t.Fatalf("spec round trip: %+v, %v", back.Security, err)
	}
	if ws.ServerName != "zk.example" || ws.User != "u" || ws.Password != "p" || ws.CAPEM != "pem" {
		t.Errorf("spec security %+v", ws)
	}
	if _, err := ws.options(); !errors.Is(err, ErrWorkerSpec) {
		t.Errorf("a CA PEM without a certificate: %v, want ErrWorkerSpec", err)
	}
	digestOnly := specSecurity(cluster.Security{User: "u", Password: "p"})
	if opts, err := digestOnly.options(); err != nil || len(opts) != 2 {
		t.Errorf("digest only: %d options, %v (want the ensemble timing and WithDigestAuth)", len(opts), err)
	}
}
