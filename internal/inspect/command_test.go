package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  error
		verb string
		node string
	}{
		{[]string{"-servers", "a:1,b:2", "show", "/x"}, nil, "show", ""},
		{[]string{"-servers", "a:1", "revoke", "/x", "n1"}, nil, "revoke", "n1"},
		{[]string{"-servers", "a:1", "watch", "/x"}, nil, "watch", ""},
		{[]string{"show", "/x"}, ErrUsage, "", ""},
		{[]string{"-servers", "a:1", "show"}, ErrUsage, "", ""},
		{[]string{"-servers", "a:1", "show", "/x", "extra"}, ErrUsage, "", ""},
		{[]string{"-servers", "a:1", "drop", "/x"}, ErrUsage, "", ""},
		{[]string{"-servers", "a:1", "-max", "0", "show", "/x"}, ErrUsage, "", ""},
		{[]string{"-servers", "a:1", "show", "x/"}, ErrBadPath, "", ""},
		{[]string{"-servers", "a:1", "-tls-ca", "/nonexistent", "show", "/x"}, ErrUsage, "", ""},
	} {
		c, err := parse(tc.args, io.Discard)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("parse(%q) = %v, want %v", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || c.verb != tc.verb || c.node != tc.node {
			t.Errorf("parse(%q) = %+v, %v", tc.args, c, err)
		}
	}
}

func TestMainUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"show", "/x"}, &out, &errb); code != 2 {
		t.Errorf("code %d, want 2", code)
	}
	if !strings.Contains(errb.String(), "-servers is required") {
		t.Errorf("stderr %q", errb.String())
	}
	errb.Reset()
	if code := Main(context.Background(), []string{"-h"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "revoke PATH [NODE]") {
		t.Errorf("-h: code %d, stderr %q", code, errb.String())
	}
}

func TestWriteText(t *testing.T) {
	at := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	live, dead := true, false
	rep := &Report{Path: "/l", Kind: KindLock, Dialect: "curator", At: at,
		Sessions: SessionInfo{Known: true, Connected: 3},
		Contenders: []Node{
			{Name: "_c_a-lock-0000000000", Holds: true, Session: "0x1", Live: &live, Age: Duration(3 * time.Second), Data: "go-1"},
			{Name: "_c_b-lock-0000000001", Session: "0x2", Live: &dead, Age: Duration(time.Second), Data: "10.0.0.1"},
		},
		Stale: []Finding{{Path: "/l/_c_b-lock-0000000001", Why: "gone"}},
	}
	var b bytes.Buffer
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"/l  lock (curator)  at 2026-11-26T21:00:00Z\n",
		"sessions: 3 connected",
		"contenders: 2\n",
		"1  holds  _c_a-lock-0000000000  0x1",
		"2  waits  _c_b-lock-0000000001  0x2 (disconnected)",
		`"go-1"`, "3s",
		"stale:\n  /l/_c_b-lock-0000000001: gone\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
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
	if len(back.Contenders) != 2 || !back.Contenders[0].Holds || back.Contenders[1].Data != "10.0.0.1" || !strings.Contains(b.String(), `"age": "3s"`) {
		t.Errorf("JSON round trip: %s", b.String())
	}
}

func TestDigestFlag(t *testing.T) {
	t.Setenv("ZKRECIPES_DIGEST", "ops:secret")
	c, err := parse([]string{"-servers", "a:1", "show", "/x"}, io.Discard)
	if err != nil || c.digest != "ops:secret" {
		t.Fatalf("digest from the environment: %+v, %v", c, err)
	}
	c, err = parse([]string{"-servers", "a:1", "-digest", "me:pw", "show", "/x"}, io.Discard)
	if err != nil || c.digest != "me:pw" {
		t.Fatalf("-digest over the environment: %+v, %v", c, err)
	}
	// A digest without a password separator is refused before dialing.
	var errb bytes.Buffer
	if code := Main(context.Background(), []string{"-servers", "127.0.0.1:1", "-digest", "nocolon", "show", "/x"}, io.Discard, &errb); code != 2 || !strings.Contains(errb.String(), "user:password") {
		t.Errorf("exit %d, %q", code, errb.String())
	}
}
