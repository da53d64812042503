package bench

import (
	"fmt"
	"html"
	"strings"
)

// implColor gives each implementation one color in the chart.
var implColor = map[string]string{
	ImplZkrecipes: "#2b7bb9",
	ImplGoZK:      "#8c8c8c",
	ImplCurator:   "#d9822b",
	ImplKazoo:     "#4c9a2a",
}

// SVG draws the run as a self-contained chart for docs/bench.md: one group of
// horizontal bars per workload, one bar per implementation, its length the
// speed relative to zkrecipes (a dashed line marks 1.0), labelled with the
// figure itself. Results that did not run are listed as n/a.
func (rep *Report) SVG() string {
	const (
		left, barH, gap, groupGap, right = 150.0, 14.0, 3.0, 14.0, 250.0
		plotW                            = 420.0
		top                              = 46.0
	)
	var workloads []string
	byW := map[string][]Result{}
	maxSpeed := 1.0
	for _, r := range rep.Results {
		if _, ok := byW[r.Workload]; !ok {
			workloads = append(workloads, r.Workload)
		}
		byW[r.Workload] = append(byW[r.Workload], r)
		if r.Impl == ImplZkrecipes && r.Err == "" {
			r.Speed = 1
		}
		maxSpeed = max(maxSpeed, r.Speed)
	}
	scale := plotW / (maxSpeed * 1.05)
	h := top
	for _, w := range workloads {
		h += float64(len(byW[w]))*(barH+gap) + groupGap
	}
	h += 30
	width := left + plotW + right
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", width, h, width, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="14" font-weight="bold">Speed relative to zkrecipes (longer is faster; same ensemble, same run)</text>`+"\n")
	x := left
	for i, impl := range AllImpls {
		fmt.Fprintf(&b, `<rect x="%.0f" y="27" width="10" height="10" fill="%s"/><text x="%.0f" y="36">%s</text>`+"\n", x+float64(i)*110, implColor[impl], x+float64(i)*110+14, impl)
	}
	y := top
	for _, w := range workloads {
		rs := byW[w]
		gh := float64(len(rs)) * (barH + gap)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end" font-weight="bold">%s</text>`+"\n", left-8, y+gh/2+4, html.EscapeString(w))
		for _, r := range rs {
			speed := r.Speed
			if r.Impl == ImplZkrecipes && r.Err == "" {
				speed = 1
			}
			switch {
			case r.Err != "":
				fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" fill="#999">%s: n/a</text>`+"\n", left+4, y+barH-3, r.Impl)
			case speed == 0:
				fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" fill="#999">%s: %s (no zkrecipes figure to compare)</text>`+"\n",
					left+4, y+barH-3, r.Impl, html.EscapeString(r.figure()))
			default:
				bw := speed * scale
				fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="%.1f" height="%.0f" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
					left, y, bw, barH, implColor[r.Impl], html.EscapeString(r.Impl), html.EscapeString(w), html.EscapeString(r.figure()))
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%.2fx  %s, %s req/op</text>`+"\n", left+bw+4, y+barH-3, speed,
					html.EscapeString(r.figure()), fmtNum(r.Cost.Requests))
			}
			y += barH + gap
		}
		y += groupGap
	}
	ref := left + scale
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="black" stroke-dasharray="4 3"/>`+"\n", ref, top-4, ref, y-groupGap)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">1.0 = zkrecipes</text>`+"\n", ref, y-groupGap+14)
	b.WriteString("</svg>\n")
	return b.String()
}
