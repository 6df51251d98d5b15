package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"time"
)

var (
	white    = color.RGBA{255, 255, 255, 255}
	black    = color.RGBA{30, 30, 30, 255}
	grey     = color.RGBA{150, 150, 150, 255}
	blue     = color.RGBA{40, 100, 200, 255}
	paleBlue = color.RGBA{150, 180, 225, 255}
	green    = color.RGBA{60, 160, 90, 255}
	light    = color.RGBA{225, 225, 225, 255}
)

// panel is one group of bars: the raw baseline, the least writes and the settle time at one N.
type panel struct {
	title              string
	raw, least, settle time.Duration // least is 0 for the figures
	reference          bool          // a figure from the issue, not from this run
}

const (
	panelW    = 330
	plotH     = 450
	barW      = 80
	barTop    = 130 // highest a bar reaches
	barBottom = 350
	textScale = 2
)

// writePlot draws, per N, the raw baseline, the least writes and the settle time, each panel on its own
// scale, then 0.2.0's figures from issue 8 in paler colours.
func writePlot(path string, rep report) error {
	panels := make([]panel, 0, len(rep.Results)+1)
	for _, r := range rep.Results {
		panels = append(panels, panel{title: fmt.Sprintf("N=%d", r.N), raw: r.Raw, least: r.Least, settle: r.Settle})
	}
	panels = append(panels, panel{title: "0.2.0 N=1000", raw: 7300 * time.Millisecond, settle: 29700 * time.Millisecond,
		reference: true})

	img := image.NewRGBA(image.Rect(0, 0, panelW*len(panels)+20, plotH))
	draw.Draw(img, img.Bounds(), &image.Uniform{C: white}, image.Point{}, draw.Src)
	drawText(img, 20, 14, "TIME TO SETTLE VS RAW BASELINE (SECONDS)", black)
	drawText(img, 20, 38, "GREY: RAW CLIENT   GREEN: LEAST WRITES, NO OPERATOR   BLUE: OPERATOR", grey)
	for i, p := range panels {
		drawPanel(img, 10+i*panelW, p)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func drawPanel(img *image.RGBA, x0 int, p panel) {
	settleColour, rawColour := blue, grey
	if p.reference {
		settleColour, rawColour = paleBlue, light
	}
	centre := x0 + panelW/2
	drawText(img, centre-textWidth(p.title)/2, 66, p.title, black)
	fillRect(img, x0+15, barBottom, panelW-30, 2, black) // the axis

	top := max(p.raw, p.least, p.settle).Seconds()
	type bar struct {
		label  string
		value  time.Duration
		colour color.Color
	}
	bars := []bar{{"RAW", p.raw, rawColour}}
	if p.least > 0 {
		bars = append(bars, bar{"LEAST", p.least, green})
	}
	bars = append(bars, bar{"OPERATOR", p.settle, settleColour})
	const gap = 16
	left := centre - (len(bars)*barW+(len(bars)-1)*gap)/2
	for i, b := range bars {
		x := left + i*(barW+gap)
		h := int(float64(barBottom-barTop) * b.value.Seconds() / top)
		fillRect(img, x, barBottom-h, barW, h, b.colour)
		value := seconds(b.value)
		drawText(img, x+barW/2-textWidth(value)/2, barBottom-h-20, value, black)
		drawText(img, x+barW/2-textWidth(b.label)/2, barBottom+10, b.label, black)
	}
	ratio := fmt.Sprintf("RATIO %.1f×", p.settle.Seconds()/p.raw.Seconds())
	if p.least > 0 {
		ratio += fmt.Sprintf("  LEAST %.1f×", p.least.Seconds()/p.raw.Seconds())
	}
	drawText(img, centre-textWidth(ratio)/2, barBottom+40, ratio, black)
	if p.reference {
		drawText(img, centre-textWidth("(ISSUE 8)")/2, barBottom+66, "(ISSUE 8)", grey)
	}
}

func fillRect(img *image.RGBA, x, y, w, h int, c color.Color) {
	draw.Draw(img, image.Rect(x, y, x+w, y+h), &image.Uniform{C: c}, image.Point{}, draw.Src)
}
