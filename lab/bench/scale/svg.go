package scale

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// implColor gives each implementation one color, as zkbench's bar chart does.
var implColor = map[string]string{
	"zkrecipes":    "#2b7bb9",
	"go-zookeeper": "#8c8c8c",
	"curator":      "#d9822b",
	"kazoo":        "#4c9a2a",
}

// SVG draws the figure as a self-contained log-log chart: one polyline with
// markers per curve, decade grid lines on both axes, a legend. Points with
// X or Y not above zero cannot be drawn on a log scale: they are left out
// (the Markdown table keeps them).
func (f Figure) SVG() string {
	const (
		w, h                     = 640.0, 400.0
		left, right, top, bottom = 70.0, 150.0, 40.0, 50.0
	)
	pw, ph := w-left-right, h-top-bottom
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, c := range f.Curves {
		for _, p := range c.Points {
			if p.X <= 0 || p.Y <= 0 {
				continue
			}
			minX, maxX = math.Min(minX, p.X), math.Max(maxX, p.X)
			minY, maxY = math.Min(minY, p.Y), math.Max(maxY, p.Y)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="13" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(f.Title))
	if math.IsInf(minX, 1) {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">no points</text></svg>`+"\n", left, top+ph/2)
		return b.String()
	}
	// Whole decades around the data.
	x0, x1 := math.Floor(math.Log10(minX)), math.Ceil(math.Log10(maxX))
	y0, y1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if x1 == x0 {
		x1++
	}
	if y1 == y0 {
		y1++
	}
	px := func(x float64) float64 { return left + (math.Log10(x)-x0)/(x1-x0)*pw }
	py := func(y float64) float64 { return top + ph - (math.Log10(y)-y0)/(y1-y0)*ph }
	for d := x0; d <= x1; d++ {
		x := left + (d-x0)/(x1-x0)*pw
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x, top, x, top+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, top+ph+15, decade(d))
	}
	for d := y0; d <= y1; d++ {
		y := top + ph - (d-y0)/(y1-y0)*ph
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, left+pw, y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-5, y+4, decade(d))
	}
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#888"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", left+pw/2, h-12, html.EscapeString(f.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+ph/2, html.EscapeString(f.YLabel))
	for i, c := range f.Curves {
		color := implColor[c.Impl]
		if color == "" {
			color = "#000"
		}
		var pts []string
		for _, p := range c.Points {
			if p.X > 0 && p.Y > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.X), py(p.Y)))
			}
		}
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), color)
		}
		for _, p := range pts {
			xy := strings.Split(p, ",")
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], color)
		}
		ly := top + 10 + float64(i)*18
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", left+pw+12, ly, left+pw+32, ly, color)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f">%s</text>`+"\n", left+pw+38, ly+4, html.EscapeString(c.Impl))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// decade labels 10^d plainly (0.01, 1, 1000) or as 1e6 when large or small.
func decade(d float64) string {
	if d >= -2 && d <= 4 {
		return num(math.Pow(10, d))
	}
	return fmt.Sprintf("1e%.0f", d)
}
