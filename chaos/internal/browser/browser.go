// Package browser loads the chaos report's pages in a headless Chromium
// and reads back what a reader would see: the verdict, where the needs
// attention block is, how wide and tall the page is, how long it took to
// render and which script errors it raised. It exists for the report's
// tests (issue 34: the report checked in a real browser).
package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Env names the environment variable that gives the browser's command
// (default: the first of Commands found on PATH).
const Env = "ZKCHAOS_BROWSER"

// Commands are the browsers looked for on PATH, lightest first: Debian's
// chromium-headless-shell and chromium packages, then Google's build.
var Commands = []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"}

// Width and Height are a laptop's window, the size pages are loaded at.
const Width, Height = 1440, 900

// Budget is the longest a page may take to render, in the page's own
// clock (performance.now() once it is parsed, its inline scripts ran and
// its layout was read back), on a 2-core machine shared with other runs.
const Budget = 3 * time.Second

// Page is what the probe read from a page in the browser. Positions are
// in CSS pixels from the top of the document.
type Page struct {
	RenderMS       float64  `json:"render_ms"`
	ScrollWidth    float64  `json:"scroll_width"`
	ClientWidth    float64  `json:"client_width"`
	Height         float64  `json:"height"`
	Verdict        string   `json:"verdict"`       // the first .verdict element's text
	AttentionTop   float64  `json:"attention_top"` // #attention; -1: none
	AttentionText  string   `json:"attention_text"`
	AttentionLinks []string `json:"attention_links"`
	AttentionKinds []string `json:"attention_kinds"`
	TableTop       float64  `json:"table_top"`        // the first table.summary; -1: none
	PorcupineShape int      `json:"porcupine_shapes"` // shapes under porcupine's #canvas; -1: not a porcupine page
	Errors         []string `json:"errors"`           // script errors
	Wall           time.Duration
	Bytes          int
}

// RenderTime is the page's render time.
func (p Page) RenderTime() time.Duration {
	return time.Duration(p.RenderMS * float64(time.Millisecond))
}

// Problems lists what no page of the report may have: a script error, a
// sideways scroll at Width (but on porcupine's visualisation, a timeline
// read sideways: its width grows with the history's operations), a
// render slower than Budget.
func (p Page) Problems() []string {
	var out []string
	if len(p.Errors) > 0 {
		out = append(out, fmt.Sprintf("script errors: %q", p.Errors))
	}
	if p.ScrollWidth > p.ClientWidth && p.PorcupineShape < 0 {
		out = append(out, fmt.Sprintf("scrolls sideways at %d px: %.0f px wide", Width, p.ScrollWidth))
	}
	if p.RenderTime() > Budget {
		out = append(out, fmt.Sprintf("rendered in %s, over the budget of %s", p.RenderTime().Round(time.Millisecond), Budget))
	}
	return out
}

// String is a line for a test's log.
func (p Page) String() string {
	return fmt.Sprintf("rendered in %.0f ms (browser process %s), %.0f x %.0f px, %d bytes",
		p.RenderMS, p.Wall.Round(time.Millisecond), p.ScrollWidth, p.Height, p.Bytes)
}

// Find returns the browser to use, or "" when there is none.
func Find() string {
	if b := os.Getenv(Env); b != "" {
		return b
	}
	for _, b := range Commands {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

// The probe: an error collector first in the head, a reader last in the
// body (it runs once everything before it was parsed and every inline
// script ran, porcupine's render among them; reading the layout forces it).
const probeHead = `<script>window.__zkerrs=[];addEventListener('error',function(e){__zkerrs.push(String(e.message))});</script>`
const probeBody = `<script>(function(){
var r={}, d=document.documentElement;
r.scroll_width=d.scrollWidth; r.client_width=d.clientWidth; r.height=d.scrollHeight;
var v=document.querySelector('.verdict'); r.verdict=v?v.textContent.trim():'';
var a=document.getElementById('attention');
r.attention_top=a?a.getBoundingClientRect().top+scrollY:-1;
r.attention_text=a?a.textContent:'';
r.attention_links=a?Array.prototype.map.call(a.querySelectorAll('a'),function(x){return x.getAttribute('href')}):[];
r.attention_kinds=a?Array.prototype.map.call(a.querySelectorAll('.kind'),function(x){return x.textContent}):[];
var tb=document.querySelector('table.summary'); r.table_top=tb?tb.getBoundingClientRect().top+scrollY:-1;
var c=document.getElementById('canvas'); r.porcupine_shapes=c?c.querySelectorAll('rect,text,path,line,polygon').length:-1;
r.errors=window.__zkerrs||[];
r.render_ms=performance.now();
var p=document.createElement('pre'); p.id='zkprobe'; p.textContent=JSON.stringify(r); document.body.appendChild(p);
})();</script>`

// Load loads page (a file) in browser at Width x Height, through a copy
// beside it with the probe added (so that its relative links hold),
// removed after, and returns what the probe read.
func Load(ctx context.Context, browser, page string) (Page, error) {
	raw, err := os.ReadFile(page)
	if err != nil {
		return Page{}, err
	}
	src := string(raw)
	i, j := strings.Index(src, "<head>"), strings.LastIndex(src, "</body>")
	if i < 0 || j < i {
		return Page{}, fmt.Errorf("%s: no <head> or </body>", page)
	}
	i += len("<head>")
	src = src[:i] + probeHead + src[i:j] + probeBody + src[j:]
	copyPath := filepath.Join(filepath.Dir(page), ".probe."+filepath.Base(page))
	if err := os.WriteFile(copyPath, []byte(src), 0o644); err != nil {
		return Page{}, err
	}
	defer os.Remove(copyPath)
	abs, err := filepath.Abs(copyPath)
	if err != nil {
		return Page{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		fmt.Sprintf("--window-size=%d,%d", Width, Height), "--dump-dom", "file://"+abs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	began := time.Now()
	out, err := cmd.Output()
	wall := time.Since(began)
	if err != nil {
		return Page{}, fmt.Errorf("%s %s: %w\n%s", browser, page, err, stderr.String())
	}
	const open = `<pre id="zkprobe">`
	k := bytes.LastIndex(out, []byte(open))
	if k < 0 {
		return Page{}, fmt.Errorf("%s: the probe wrote nothing (did the page's scripts stop?)\n%s", page, stderr.String())
	}
	body := out[k+len(open):]
	end := bytes.Index(body, []byte("</pre>"))
	if end < 0 {
		return Page{}, errors.New(page + ": the probe's output is cut short")
	}
	var p Page
	if err := json.Unmarshal([]byte(html.UnescapeString(string(body[:end]))), &p); err != nil {
		return Page{}, fmt.Errorf("%s: probe: %w: %s", page, err, body[:end])
	}
	p.Wall, p.Bytes = wall, len(raw)
	return p, nil
}
