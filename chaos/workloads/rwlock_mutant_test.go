package workloads

import "testing"

func TestSeqSuffix(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"_c_0f8e2e4a-1b6c-4a57-9b55-3c1d2e4f5a6b-__WRIT__0000000042", "0000000042"},
		{"_c_0f8e2e4a-1b6c-4a57-9b55-3c1d2e4f5a6b-__READ__0000000042", "0000000042"},
		{"short", "short"},
		{"", ""},
	} {
		if got := seqSuffix(tc.name); got != tc.want {
			t.Errorf("seqSuffix(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	kids := []string{"a-0000000002", "b-0000000001"}
	if got := sortIndex(kids, "b-0000000001"); got != 1 {
		t.Errorf("sortIndex = %d, want 1", got)
	}
	if got := sortIndex(kids, "c"); got != -1 {
		t.Errorf("sortIndex of a missing name = %d, want -1", got)
	}
}
