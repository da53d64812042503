package testenv

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestZooCfgRender(t *testing.T) {
	three := []peer{{"zk1", 2888, 3888}, {"zk2", 2888, 3888}, {"zk3", 2888, 3888}}
	tests := []struct {
		name    string
		cfg     zooCfg
		want    []string
		wantNot []string
	}{
		{
			name: "standalone has no server lines",
			cfg:  zooCfg{tick: 200 * time.Millisecond, maxSession: time.Minute, dataDir: "/d", clientPort: 2181, peers: three[:1]},
			want: []string{"tickTime=200\n", "dataDir=/d\n", "clientPort=2181\n", "maxSessionTimeout=60000\n",
				"4lw.commands.whitelist=*\n", "admin.enableServer=false\n"},
			wantNot: []string{"server.1=", "standaloneEnabled", "clientPortAddress", "localSessions"},
		},
		{
			name: "local sessions, upgraded by an ephemeral",
			cfg:  zooCfg{tick: 200 * time.Millisecond, maxSession: time.Minute, dataDir: "/d", clientPort: 2181, peers: three, localSessions: true},
			want: []string{"localSessionsEnabled=true\n", "localSessionsUpgradingEnabled=true\n"},
		},
		{
			name: "ensemble lists every server as participant",
			cfg:  zooCfg{tick: time.Second, maxSession: 4 * time.Second, dataDir: "/zk/data", clientPort: 2181, peers: three, listenAll: true},
			want: []string{"tickTime=1000\n", "server.1=zk1:2888:3888:participant\n", "server.3=zk3:2888:3888:participant\n",
				"standaloneEnabled=false\n", "quorumListenOnAllIPs=true\n", "maxSessionTimeout=4000\n"},
		},
		{
			name: "loopback servers bind the client address",
			cfg: zooCfg{tick: 200 * time.Millisecond, maxSession: time.Minute, dataDir: "/tmp/x", clientAddr: "127.0.0.1", clientPort: 40001,
				peers: []peer{{"127.0.0.1", 1, 2}, {"127.0.0.1", 3, 4}}},
			want: []string{"clientPortAddress=127.0.0.1\n", "clientPort=40001\n", "server.2=127.0.0.1:3:4:participant\n", "quorumListenOnAllIPs=false\n"},
		},
		{
			name: "a secure client port replaces the plain one",
			cfg: zooCfg{tick: 200 * time.Millisecond, maxSession: time.Minute, dataDir: "/d", clientAddr: "127.0.0.1", clientPort: 40001,
				secure: true, peers: three[:1]},
			want:    []string{"secureClientPortAddress=127.0.0.1\n", "secureClientPort=40001\n"},
			wantNot: []string{"\nclientPort=", "\nclientPortAddress="},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.cfg.render()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in\n%s", w, got)
				}
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.0/0\nMode: leader\nNode count: 5\n", ModeLeader, false},
		{"Mode: follower\n", ModeFollower, false},
		{"Mode: standalone \r\n", ModeStandalone, false},
		{"This ZooKeeper instance is not currently serving requests\n", "", true},
		{"", "", true},
		{"Mode:leader", "", true},
	}
	for _, tt := range tests {
		got, err := parseMode(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseMode(%q) = %q, %v; want %q, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// dump38 is what a ZooKeeper 3.8 leader answers to dump, with two sessions.
const dump38 = `SessionTracker dump:
Session Sets (3)/(2):
0 expire at Sun Nov 22 03:20:01 UTC 2026:
1 expire at Sun Nov 22 03:20:02 UTC 2026:
	0x10000a1b2c30000
1 expire at Sun Nov 22 03:20:04 UTC 2026:
	0x2000000000001f
ephemeral nodes dump:
Sessions with Ephemerals (1):
0x10000a1b2c30000:
	/lock/_c_x-lock-0000000001
Connections dump:
Connections Sets (1)/(1):
`

func TestParseDumpSessions(t *testing.T) {
	got := parseDumpSessions(dump38)
	want := map[int64]bool{0x10000a1b2c30000: true, 0x2000000000001f: true}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for id := range want {
		if !got[id] {
			t.Errorf("missing 0x%x in %v", id, got)
		}
	}
	if n := len(parseDumpSessions("SessionTracker dump:\nSession Sets (0)/(0):\n")); n != 0 {
		t.Errorf("empty dump gave %d sessions", n)
	}
}

func FuzzParseDumpSessions(f *testing.F) {
	f.Add(dump38)
	f.Add("0x")
	f.Add("\t0xffffffffffffffff:\n0xzz")
	f.Fuzz(func(t *testing.T, s string) {
		for id := range parseDumpSessions(s) {
			// Every id found must be written in the input in lower-case hex.
			if !strings.Contains(strings.ToLower(s), strconv.FormatUint(uint64(id), 16)) {
				t.Fatalf("id 0x%x not in input %q", id, s)
			}
		}
	})
}

func FuzzParseMode(f *testing.F) {
	f.Add("Mode: leader\n")
	f.Add("not currently serving")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseMode(s)
		if err == nil && !strings.Contains(s, "Mode: "+m) {
			t.Fatalf("mode %q not in input %q", m, s)
		}
	})
}

func TestPick(t *testing.T) {
	tests := []struct {
		n       int
		in      []int
		want    []int
		wantErr bool
	}{
		{3, nil, []int{0, 1, 2}, false},
		{3, []int{2}, []int{2}, false},
		{3, []int{0, 2}, []int{0, 2}, false},
		{3, []int{3}, nil, true},
		{3, []int{-1}, nil, true},
		{1, nil, []int{0}, false},
	}
	for _, tt := range tests {
		got, err := pick(tt.n, tt.in)
		if tt.wantErr {
			if !errors.Is(err, ErrServer) {
				t.Errorf("pick(%d, %v) err = %v, want ErrServer", tt.n, tt.in, err)
			}
			continue
		}
		if err != nil || !equalInts(got, tt.want) {
			t.Errorf("pick(%d, %v) = %v, %v; want %v", tt.n, tt.in, got, err, tt.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestConfigDefaults(t *testing.T) {
	t.Setenv(EnvBackend, "")
	t.Setenv(EnvImage, "")
	t.Setenv(EnvVersion, "")
	c, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Servers != 3 || c.TickTime != 200*time.Millisecond || c.Image != DefaultImage || c.Backend != BackendAuto ||
		c.MaxSessionTimeout != time.Minute || c.JavaHeap != "128m" || c.Logger == nil {
		t.Errorf("defaults = %+v", c)
	}
	t.Setenv(EnvBackend, "processes")
	t.Setenv(EnvImage, "example/zk:1")
	c, err = Config{}.withDefaults()
	if err != nil || c.Backend != BackendProcesses || c.Image != "example/zk:1" {
		t.Errorf("env overrides: %+v, %v", c, err)
	}
	bad := []Config{
		{Servers: -1}, {Servers: 6}, {TickTime: time.Millisecond},
		{Backend: "vm"}, {TickTime: time.Second, MaxSessionTimeout: time.Second},
		{ContainerCheckInterval: -time.Second},
	}
	for _, b := range bad {
		if _, err := b.withDefaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err = %v, want ErrConfig", b, err)
		}
	}
}

// TestServerProps: extended types (TTL nodes) are on unless turned off, and
// the container check interval is passed only when set.
func TestServerProps(t *testing.T) {
	for _, tc := range []struct {
		cfg       Config
		want, not []string
	}{
		{Config{}, []string{"-Dzookeeper.extendedTypesEnabled=true", "-Dzookeeper.admin.enableServer=false"}, []string{"checkIntervalMs"}},
		{Config{NoExtendedTypes: true}, nil, []string{"extendedTypesEnabled"}},
		{Config{ContainerCheckInterval: 1500 * time.Millisecond}, []string{"-Dznode.container.checkIntervalMs=1500"}, nil},
	} {
		got := strings.Join(tc.cfg.serverProps(), " ")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: props %q lack %q", tc.cfg, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%+v: props %q have %q", tc.cfg, got, n)
			}
		}
	}
}

func TestOwnerGone(t *testing.T) {
	if ownerGone(ownerLabel()) {
		t.Error("this process reported gone")
	}
	if ownerGone("some-other-host:1") {
		t.Error("a process on another host reported gone")
	}
	if ownerGone("garbage") || ownerGone("") {
		t.Error("a malformed label reported gone")
	}
}

// TestFrameWalk: the cut-after-frame toxic finds the end of the first frame
// however the stream is chunked.
func TestFrameWalk(t *testing.T) {
	frame := func(n int) []byte {
		b := []byte{0, 0, byte(n >> 8), byte(n)}
		return append(b, make([]byte, n)...)
	}
	stream := append(frame(20), frame(3)...)
	tests := []struct {
		name   string
		chunks [][]byte
		want   int // index of the chunk where the first frame ends
		wantN  int // bytes of that chunk up to the frame's end
	}{
		{"whole stream in one chunk", [][]byte{stream}, 0, 24},
		{"frame alone", [][]byte{frame(20)}, 0, 24},
		{"split in the length", [][]byte{stream[:2], stream[2:]}, 1, 22},
		{"split in the payload", [][]byte{stream[:10], stream[10:30]}, 1, 14},
		{"byte by byte", nil, 23, 1},
		{"empty frame", [][]byte{append(frame(0), frame(5)...)}, 0, 4},
	}
	for i := range stream {
		tests[4].chunks = append(tests[4].chunks, stream[i:i+1])
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st frameState
			for i, c := range tt.chunks {
				n, done := st.walk(c)
				if done != (i == tt.want) {
					t.Fatalf("chunk %d: done = %v", i, done)
				}
				if done {
					if n != tt.wantN {
						t.Fatalf("chunk %d: frame ends at %d, want %d", i, n, tt.wantN)
					}
					return
				}
				if n != len(c) {
					t.Fatalf("chunk %d: consumed %d of %d", i, n, len(c))
				}
			}
			t.Fatal("no frame end found")
		})
	}
}

// On a TLS link the cut walks TLS records: a 5-byte header whose last two
// bytes are the length of what follows.
func TestFrameStateWalksTLSRecords(t *testing.T) {
	record := func(n int) []byte {
		return append([]byte{23, 3, 3, byte(n >> 8), byte(n)}, make([]byte, n)...)
	}
	stream := append(record(300), record(7)...)
	for split := 1; split < 305; split += 37 {
		st := frameState{records: true}
		if n, done := st.walk(stream[:split]); done || n != split {
			t.Fatalf("split %d: first chunk done=%v n=%d", split, done, n)
		}
		n, done := st.walk(stream[split:])
		if !done || split+n != 305 {
			t.Fatalf("split %d: record ends at %d (done=%v), want 305", split, split+n, done)
		}
	}
	// Read as ZooKeeper frames, the same bytes claim a length of 0x17030301.
	var st frameState
	if _, done := st.walk(stream); done {
		t.Fatal("the frame walker found a frame end in TLS records")
	}
}

// TestConfigVersion: the release picks the image unless one is named, from
// the field or ZKRECIPES_ZK_VERSION; none asked leaves the version unchecked
// on the default image.
func TestConfigVersion(t *testing.T) {
	t.Setenv(EnvImage, "")
	t.Setenv(EnvVersion, "")
	for _, tc := range []struct {
		cfg            Config
		env, envImage  string
		version, image string
	}{
		{Config{}, "", "", "", DefaultImage},
		{Config{Version: "3.8.0"}, "", "", "3.8.0", DefaultImage},
		{Config{Version: "3.9.3"}, "", "", "3.9.3", "zkrecipes/zookeeper:3.9.3-debian"},
		{Config{}, "3.9.6", "", "3.9.6", "zkrecipes/zookeeper:3.9.6-debian"},
		{Config{Version: "3.9.3"}, "3.9.6", "", "3.9.3", "zkrecipes/zookeeper:3.9.3-debian"},
		{Config{Version: "3.9.6", Image: "example/zk:1"}, "", "", "3.9.6", "example/zk:1"},
		{Config{}, "3.9.6", "example/zk:2", "3.9.6", "example/zk:2"},
	} {
		t.Setenv(EnvVersion, tc.env)
		t.Setenv(EnvImage, tc.envImage)
		c, err := tc.cfg.withDefaults()
		if err != nil {
			t.Fatalf("%+v (env %q): %v", tc.cfg, tc.env, err)
		}
		if c.Version != tc.version || c.Image != tc.image {
			t.Errorf("%+v (env %q, %q): version %q image %q, want %q %q", tc.cfg, tc.env, tc.envImage, c.Version, c.Image, tc.version, tc.image)
		}
		img, err := ImageOf(tc.cfg)
		if err != nil || img != tc.image {
			t.Errorf("ImageOf(%+v) = %q, %v; want %q", tc.cfg, img, err, tc.image)
		}
	}
	t.Setenv(EnvVersion, "")
	t.Setenv(EnvImage, "")
	if _, err := (Config{Version: "3.7.1"}).withDefaults(); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown release: %v, want ErrConfig", err)
	}
	t.Setenv(EnvVersion, "4.0.0")
	if _, err := (Config{}).withDefaults(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "3.9.6") {
		t.Errorf("unknown release from the environment: %v, want ErrConfig listing the known ones", err)
	}
	if _, ok := versionForImage(DefaultImage); !ok {
		t.Errorf("the default image is not among Versions")
	}
	if z, _ := LookupVersion(DefaultVersion); z.Image != DefaultImage {
		t.Errorf("DefaultVersion's image is %q, not DefaultImage", z.Image)
	}
}

// TestParseVersion: the release is what srvr reports before the build
// suffix, with Apache's and Debian's builds alike.
func TestParseVersion(t *testing.T) {
	for in, want := range map[string]string{
		"Zookeeper version: 3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on 2022-02-25 08:49 UTC\nLatency min/avg/max: 0/0.0/0\nMode: leader\n": "3.8.0",
		"Zookeeper version: 3.9.6-debian, built on 2025-01-01\nMode: follower\n":                                                                         "3.9.6",
		"Zookeeper version: 3.9.3, built on x\n": "3.9.3",
	} {
		got, err := parseVersion(in)
		if err != nil || got != want {
			t.Errorf("parseVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parseVersion("This ZooKeeper instance is not currently serving requests\n"); err == nil {
		t.Error("a server not serving has no version, want an error")
	}
}

func TestRetryFreeze(t *testing.T) {
	refused := errors.New("Cannot pause container 1: OCI runtime pause failed: unable to freeze: unknown")
	other := errors.New("Cannot pause container 1: container is not running")
	tests := []struct {
		name      string
		fails     []error // what the tries return, in order; nil after the list
		wantTries int
		wantErr   error
	}{
		{"frozen at once", nil, 1, nil},
		{"frozen at the second try", []error{refused}, 2, nil},
		{"frozen at the last try", []error{refused, refused, refused}, freezeTries, nil},
		{"refused every time", []error{refused, refused, refused, refused, refused}, freezeTries, refused},
		{"another error is not retried", []error{other}, 1, other},
		{"another error after a refusal", []error{refused, other}, 2, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tries := 0
			err := retryFreeze(context.Background(), func() error {
				tries++
				if tries <= len(tt.fails) {
					return tt.fails[tries-1]
				}
				return nil
			})
			if tries != tt.wantTries || err != tt.wantErr {
				t.Fatalf("tries %d, err %v; want %d, %v", tries, err, tt.wantTries, tt.wantErr)
			}
		})
	}
	t.Run("a done context ends the retries", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		tries := 0
		err := retryFreeze(ctx, func() error {
			tries++
			cancel()
			return refused
		})
		if tries != 1 || err != refused {
			t.Fatalf("tries %d, err %v; want 1, %v", tries, err, refused)
		}
	})
}

// TestIsolateScript pins the isolation's one iptables-restore: every rule
// of its direction, quorum and election ports, between *filter and
// COMMIT, appended (--noflush) so Rejoin's flush undoes it.
func TestIsolateScript(t *testing.T) {
	for _, c := range []struct {
		dir  Direction
		want []string
	}{
		{Both, []string{"-A INPUT -p tcp --dport 2888 -j DROP", "-A INPUT -p tcp --dport 3888 -j DROP", "-A INPUT -p tcp --sport 2888 -j DROP", "-A INPUT -p tcp --sport 3888 -j DROP",
			"-A OUTPUT -p tcp --dport 2888 -j DROP", "-A OUTPUT -p tcp --dport 3888 -j DROP", "-A OUTPUT -p tcp --sport 2888 -j DROP", "-A OUTPUT -p tcp --sport 3888 -j DROP"}},
		{Inbound, []string{"-A INPUT -p tcp --dport 2888 -j DROP", "-A INPUT -p tcp --dport 3888 -j DROP", "-A INPUT -p tcp --sport 2888 -j DROP", "-A INPUT -p tcp --sport 3888 -j DROP"}},
		{Outbound, []string{"-A OUTPUT -p tcp --dport 2888 -j DROP", "-A OUTPUT -p tcp --dport 3888 -j DROP", "-A OUTPUT -p tcp --sport 2888 -j DROP", "-A OUTPUT -p tcp --sport 3888 -j DROP"}},
	} {
		lines := append(append([]string{"*filter"}, c.want...), "COMMIT")
		want := "printf '%s\\n' '" + strings.Join(lines, "' '") + "' | iptables-restore --noflush"
		if got := isolateScript(c.dir); got != want {
			t.Errorf("isolateScript(%q) =\n%s\nwant\n%s", c.dir, got, want)
		}
	}
}
