package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// noEnv clears the environment variables the command reads, so that an
// operator's shell does not change the tests.
func noEnv(t *testing.T) {
	for _, name := range envFlags {
		t.Setenv(envName(name), "")
	}
}

func TestParse(t *testing.T) {
	noEnv(t)
	for _, tc := range []struct {
		args   []string
		err    error
		verb   string
		path   string
		node   string
		output string
	}{
		{args: []string{"-servers", "a:1,b:2", "show", "/x"}, verb: "show", path: "/x", output: "text"},
		{args: []string{"-servers", "a:1", "revoke", "/x", "n1"}, verb: "revoke", path: "/x", node: "n1", output: "text"},
		{args: []string{"-servers", "a:1", "watch", "/x"}, verb: "watch", path: "/x", output: "text"},
		// Flags after the command, between its words, and mixed.
		{args: []string{"show", "/x", "-servers", "a:1", "-json"}, verb: "show", path: "/x", output: "json"},
		{args: []string{"revoke", "-servers=a:1", "/x", "-force", "n1"}, verb: "revoke", path: "/x", node: "n1", output: "text"},
		{args: []string{"-servers", "a:1", "show", "-o", "wide", "/x"}, verb: "show", path: "/x", output: "wide"},
		{args: []string{"-servers", "a:1", "show", "/x", "-wide"}, verb: "show", path: "/x", output: "wide"},
		{args: []string{"-servers", "a:1", "-json", "show", "/x", "-o", "json"}, verb: "show", path: "/x", output: "json"},
		// "--" ends the flags: what follows is a word even if it looks like one.
		{args: []string{"-servers", "a:1", "revoke", "--", "/x", "-n1"}, verb: "revoke", path: "/x", node: "-n1", output: "text"},
		{args: []string{"show", "/x"}, err: ErrUsage},
		{args: []string{"-servers", "a:1"}, err: ErrUsage},
		{args: []string{"-servers", "a:1", "show"}, err: ErrUsage},
		{args: []string{"-servers", "a:1", "show", "/x", "extra"}, err: ErrUsage},
		{args: []string{"-servers", "a:1", "drop", "/x"}, err: ErrUsage},
		{args: []string{"-servers", "a:1", "-max", "0", "show", "/x"}, err: ErrUsage},
		{args: []string{"-servers", "a:1", "show", "x/"}, err: ErrBadPath},
		{args: []string{"-servers", "a:1", "-tls-ca", "/nonexistent", "show", "/x"}, err: ErrUsage},
		{args: []string{"-servers", "a:1", "show", "/x", "-bogus"}, err: ErrUsage},
		{args: []string{"-servers", "a:1", "show", "/x", "-o", "yaml"}, err: ErrUsage},
		{args: []string{"-servers", "a:1", "show", "/x", "-json", "-wide"}, err: ErrUsage},
		{args: []string{"-servers", "a:1", "show", "/x", "-json", "-o", "wide"}, err: ErrUsage},
		{args: []string{"-servers", "a:1", "show", "/x", "-force"}, err: ErrUsage},
	} {
		c, _, err := parse(tc.args)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("parse(%q) = %v, want %v", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || c.verb != tc.verb || c.path != tc.path || c.node != tc.node || c.output != tc.output {
			t.Errorf("parse(%q) = %+v, %v; want %s %s %q output %s", tc.args, c, err, tc.verb, tc.path, tc.node, tc.output)
		}
	}
}

// The environment supplies the connection flags; the command line wins.
func TestParseEnvironment(t *testing.T) {
	noEnv(t)
	t.Setenv("ZKRECIPES_SERVERS", "e1:2181, e2:2181")
	t.Setenv("ZKRECIPES_TIMEOUT", "3s")
	c, _, err := parse([]string{"show", "/x"})
	if err != nil || strings.Join(c.servers, ",") != "e1:2181,e2:2181" || c.timeout != 3*time.Second {
		t.Fatalf("from the environment: %+v, %v", c, err)
	}
	c, _, err = parse([]string{"show", "/x", "-servers", "f:1", "-timeout", "1s"})
	if err != nil || strings.Join(c.servers, ",") != "f:1" || c.timeout != time.Second {
		t.Fatalf("flags over the environment: %+v, %v", c, err)
	}
	t.Setenv("ZKRECIPES_TIMEOUT", "soon")
	if _, _, err := parse([]string{"show", "/x"}); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "$ZKRECIPES_TIMEOUT") {
		t.Errorf("bad $ZKRECIPES_TIMEOUT: %v", err)
	}
}

func TestMainUsage(t *testing.T) {
	noEnv(t)
	ctx := context.Background()
	for _, tc := range []struct {
		args       []string
		code       int
		out, errIn string // parts of stdout and stderr
	}{
		{[]string{"show", "/x"}, 2, "", "no servers: give -servers host:port[,host:port...] or set $ZKRECIPES_SERVERS"},
		{[]string{}, 2, "", "want a command"},
		{[]string{"-h"}, 0, "revoke PATH [NODE]", ""},
		{[]string{"show", "-h"}, 0, "revoke PATH [NODE]", ""},
		{[]string{"show", "/x", "--help"}, 0, "-servers string", ""},
		{[]string{"help"}, 0, "ZKRECIPES_<FLAG>", ""},
		{[]string{"-version"}, 0, "zkrecipes ", ""},
		{[]string{"version"}, 0, "go: go1.", ""},
		{[]string{"show", "/x", "-nope"}, 2, "", "flag provided but not defined: -nope"},
	} {
		var out, errb bytes.Buffer
		code := Main(ctx, tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.errIn) {
			t.Errorf("Main(%q) = %d, stdout %q, stderr %q; want %d with %q and %q", tc.args, code, out.String(), errb.String(), tc.code, tc.out, tc.errIn)
		}
		if tc.code == 0 && errb.Len() > 0 {
			t.Errorf("Main(%q) wrote to stderr: %q", tc.args, errb.String())
		}
	}
}

// A connect to servers that refuse connections fails at once (well before
// -timeout), naming each server and the cause.
func TestConnectRefused(t *testing.T) {
	noEnv(t)
	var addrs []string
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, l.Addr().String())
		l.Close() // nothing listens there now: connections are refused
	}
	var errb bytes.Buffer
	start := time.Now()
	code := Main(context.Background(), []string{"show", "/x", "-servers", strings.Join(addrs, ","), "-timeout", "30s"}, io.Discard, &errb)
	took := time.Since(start)
	msg := errb.String()
	if code != 1 || !strings.Contains(msg, "cannot connect to "+strings.Join(addrs, ",")) || !strings.Contains(msg, "connection refused") ||
		!strings.Contains(msg, addrs[0]) || !strings.Contains(msg, addrs[1]) {
		t.Errorf("exit %d, stderr %q", code, msg)
	}
	if took > 15*time.Second {
		t.Errorf("took %v: want it to give up once every server refused, not at -timeout (30s)", took)
	}
	t.Logf("%v: %s", took, msg)
}

// A server that accepts TCP connections and says nothing: the connect
// times out at -timeout and says so, naming the server.
func TestConnectSilentServer(t *testing.T) {
	noEnv(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				<-done
				c.Close()
			}()
		}
	}()
	var errb bytes.Buffer
	start := time.Now()
	code := Main(context.Background(), []string{"show", "/x", "-servers", l.Addr().String(), "-timeout", "2s"}, io.Discard, &errb)
	took := time.Since(start)
	msg := errb.String()
	if code != 1 || !strings.Contains(msg, "cannot connect to "+l.Addr().String()) || !strings.Contains(msg, "no session within 2s (-timeout)") ||
		!strings.Contains(msg, "accepted TCP connections but sent no session") {
		t.Errorf("exit %d, stderr %q", code, msg)
	}
	// go-zookeeper alone would wait for the handshake's answer for ten
	// receive timeouts (13 s here) before the failed session closes.
	if took > 6*time.Second {
		t.Errorf("took %v with -timeout 2s", took)
	}
	t.Logf("%v: %s", took, msg)
}

func TestWriteText(t *testing.T) {
	at := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	live, dead := true, false
	rep := &Report{Path: "/l", Kind: KindLock, Dialect: "curator", At: at,
		Sessions: SessionInfo{Known: true, Connected: 3, Members: 3, Asked: 3},
		Contenders: []Node{
			{Name: "_c_" + g1 + "-lock-0000000000", Path: "/l/_c_" + g1 + "-lock-0000000000", Holds: true, Session: "0x300000f9ed90001", Live: &live, Liveness: "connected", Age: Duration(3 * time.Second), Data: "go-1"},
			{Name: "_c_" + g2 + "-lock-0000000001", Path: "/l/_c_" + g2 + "-lock-0000000001", Session: "0x300000f9ed90002", Live: &dead, Liveness: "disconnected", Age: Duration(time.Second), Data: "10.0.0.1"},
			{Name: "_c_" + g3 + "-lock-0000000002", Path: "/l/_c_" + g3 + "-lock-0000000002", Session: "0x300000f9ed90003", Liveness: "unknown", Age: Duration(time.Second), Data: strings.Repeat("x", 100)},
		},
		Stale: []Finding{{Path: "/l/_c_" + g2 + "-lock-0000000001", Why: "gone"}},
	}
	var b bytes.Buffer
	if err := WriteText(&b, rep, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"/l  lock (curator)  at 2026-11-26T21:00:00Z\n",
		"sessions: 3 connected to the 3 servers of the ensemble\n",
		"contenders: 3\n",
		"1  holds  lock-0000000000  0x300000f9ed90001 ",
		"2  waits  lock-0000000001  0x300000f9ed90002 (disconnected)",
		"3  waits  lock-0000000002  0x300000f9ed90003 (unknown)",
		`"go-1"`, "3s",
		`"` + strings.Repeat("x", maxDataText) + `..."`,
		"stale:\n  lock-0000000001: gone\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, g1) {
		t.Errorf("default text shows the full names:\n%s", got)
	}
	// The widest row: the longest state and liveness words with data cut
	// short; real session ids have 15 or 16 hex digits.
	for _, line := range strings.Split(got, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	b.Reset()
	if err := WriteText(&b, rep, TextOptions{Wide: true}); err != nil {
		t.Fatal(err)
	}
	wide := b.String()
	for _, want := range []string{"1  holds  _c_" + g1 + "-lock-0000000000  0x300000f9ed90001", "stale:\n  /l/_c_" + g2 + "-lock-0000000001: gone\n", `"` + strings.Repeat("x", 100) + `"`} {
		if !strings.Contains(wide, want) {
			t.Errorf("wide text lacks %q:\n%s", want, wide)
		}
	}
	b.Reset()
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("%v in %s", err, b.String())
	}
	if len(back.Contenders) != 3 || !back.Contenders[0].Holds || back.Contenders[1].Data != "10.0.0.1" || back.Contenders[2].Liveness != "unknown" ||
		back.Contenders[2].Live != nil || !strings.Contains(b.String(), `"age": "3s"`) {
		t.Errorf("JSON round trip: %s", b.String())
	}
}

// The sessions heading for each way liveness was learned.
func TestWriteTextSessions(t *testing.T) {
	for _, tc := range []struct {
		s    SessionInfo
		want string
	}{
		{SessionInfo{Known: true, Connected: 2, Members: 1, Asked: 1}, "sessions: 2 connected to the server\n"},
		{SessionInfo{Connected: 2, Members: 3, Asked: 1, Why: "1 of the 3 servers of the ensemble answered",
			Missing: []string{"server 2 (zk2): not in -servers"}},
			"sessions: 2 listed by the servers asked; an owner none listed is \"unknown\": 1 of the 3 servers of the ensemble answered\n  server 2 (zk2): not in -servers\n"},
		{SessionInfo{Why: "not checked (-cons=false)"}, "sessions: liveness unknown: not checked (-cons=false)\n"},
	} {
		var b bytes.Buffer
		if err := WriteText(&b, &Report{Path: "/e", Kind: KindEmpty, Sessions: tc.s}, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%+v:\n%s\nwant %q", tc.s, b.String(), tc.want)
		}
	}
}

func TestShortName(t *testing.T) {
	for in, want := range map[string]string{
		"_c_" + g1 + "-lock-0000000000":      "lock-0000000000",
		"_c_" + g1 + "-__READ__0000000003":   "__READ__0000000003",
		"_c_" + g1 + "-lease-0000000001":     "lease-0000000001",
		k1 + "__lock__0000000001":            "__lock__0000000001",
		k1 + "__rlock__0000000001":           "__rlock__0000000001",
		g1:                                   "0e02b2c3…",
		k1:                                   "0e02b2c3…",
		"qn-0000000001":                      "qn-0000000001",
		"x-72057594037927937-0000000004":     "x-72057594037927937-0000000004",
		"_c_not-a-uuid-lock-0000000000":      "_c_not-a-uuid-lock-0000000000",
		"_c_" + g1[:35] + "x-lock-000000000": "_c_" + g1[:35] + "x-lock-000000000",
	} {
		if got := ShortName(in); got != want {
			t.Errorf("ShortName(%q) = %q, want %q", in, got, want)
		}
	}
	// Two members whose GUIDs share 8 characters: full names.
	same := []string{"0e02b2c3-0000-4000-8000-000000000001", "0e02b2c3-0000-4000-8000-000000000002"}
	if got := ShortNames(same); got[0] != same[0] || got[1] != same[1] {
		t.Errorf("ShortNames(%q) = %q", same, got)
	}
}

func TestDigestFlag(t *testing.T) {
	noEnv(t)
	t.Setenv("ZKRECIPES_DIGEST", "ops:secret")
	c, _, err := parse([]string{"-servers", "a:1", "show", "/x"})
	if err != nil || c.digest != "ops:secret" {
		t.Fatalf("digest from the environment: %+v, %v", c, err)
	}
	c, _, err = parse([]string{"-servers", "a:1", "-digest", "me:pw", "show", "/x"})
	if err != nil || c.digest != "me:pw" {
		t.Fatalf("-digest over the environment: %+v, %v", c, err)
	}
	// A digest without a password separator is refused before dialing.
	var errb bytes.Buffer
	if code := Main(context.Background(), []string{"-servers", "127.0.0.1:1", "-digest", "nocolon", "show", "/x"}, io.Discard, &errb); code != 2 || !strings.Contains(errb.String(), "user:password") {
		t.Errorf("exit %d, %q", code, errb.String())
	}
}
