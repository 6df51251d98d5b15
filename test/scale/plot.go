package main

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chartPhase is one bar of each group of the chart: a phase of the benchmark.
type chartPhase struct {
	legend string
	colour color.Color
	time   func(runTimes) time.Duration
}

// chartPhases are drawn in this order, left to right in each group: what any client pays for
// the same children, what no operator can leave out, what one that watches and checks pays
// too, then the operator. Colours from the Okabe–Ito palette, which colour-blind readers can
// tell apart.
var chartPhases = []chartPhase{
	{"raw writes: the N Deployments and N Services applied from a client",
		color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}, func(t runTimes) time.Duration { return t.Raw }},
	{"least writes: per MyApp the create, 2 applies and a status patch, from a client",
		color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, func(t runTimes) time.Duration { return t.Least }},
	{"least requests: the least writes with an operator's watches open and a GET before each apply",
		color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, func(t runTimes) time.Duration { return t.LeastRequests }},
	{"operator: from the first create until it stops sending requests",
		color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, func(t runTimes) time.Duration { return t.Settle }},
}

// chartBar is one bar of the chart, in milliseconds per MyApp (the phase's wall time / N), so
// that every N shares one axis.
type chartBar struct {
	x     float64   // where on the x axis
	phase int       // index in chartPhases
	value float64   // the run the report's table shows
	runs  []float64 // every run, in run order; none with a single run
}

// chartBars lays out the report's results: one group of bars per N, a gap between groups.
func chartBars(rep report) []chartBar {
	var bars []chartBar
	for g, r := range rep.Results {
		for k, ph := range chartPhases {
			b := chartBar{x: float64(g*(len(chartPhases)+1) + k), phase: k, value: perMyApp(ph.time(r.times()), r.N)}
			for _, run := range r.Runs {
				b.runs = append(b.runs, perMyApp(ph.time(run), r.N))
			}
			bars = append(bars, b)
		}
	}
	return bars
}

func perMyApp(d time.Duration, n int) float64 { return float64(d.Milliseconds()) / float64(n) }

// groupCentre is the middle of group g on the x axis, where its N is written.
func groupCentre(g int) float64 {
	return float64(g*(len(chartPhases)+1)) + float64(len(chartPhases)-1)/2
}

// runsOf is the number of runs behind the bars: 1 when they carry none.
func runsOf(rep report) int {
	runs := 1
	for _, r := range rep.Results {
		runs = max(runs, len(r.Runs))
	}
	return runs
}

const (
	chartWidth  = 9 * vg.Inch
	chartHeight = 6 * vg.Inch
	maxBarWidth = 72 // points: one size alone does not get bars a third of the chart wide
)

// sans is the chart's typeface, at the given size; plot's default is a serif one.
func sans(size float64) font.Font {
	return font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, vg.Points(size))
}

// writePlot draws, per N, the raw writes, the least writes, the least requests and the
// operator's settle time, per MyApp on one axis, with every run's figure and their range,
// and writes it as a PNG.
func writePlot(path string, rep report) error {
	if len(rep.Results) == 0 {
		return errors.New("no results to chart")
	}
	canvas := vgimg.New(chartWidth, chartHeight)
	dc := draw.New(canvas)
	if err := drawChart(dc, rep); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// drawChart draws the plot with its legend below it, outside the data, so that the legend
// never hides a bar and has the whole width for its words.
func drawChart(dc draw.Canvas, rep report) error {
	bars := chartBars(rep)
	runs := runsOf(rep)
	p := plot.New()
	p.Title.Text = "Settling N new MyApps: the operator against clients that send what it must"
	p.Title.TextStyle.Font = sans(15)
	p.Title.Padding = vg.Points(10)
	p.Y.Label.Text = "wall time per MyApp (ms): the phase's time / N"
	p.X.Label.Text = fmt.Sprintf("N MyApps created 10 at a time, each phase on a fresh API server (envtest), %s", runsText(runs))
	for _, style := range []*text.Style{&p.X.Label.TextStyle, &p.Y.Label.TextStyle} {
		style.Font = sans(12)
	}
	for _, style := range []*text.Style{&p.X.Tick.Label, &p.Y.Tick.Label} {
		style.Font = sans(11)
	}
	top := 0.0
	for _, b := range bars {
		top = max(top, b.value, slices.Max(append([]float64{0}, b.runs...)))
	}
	p.Y.Min, p.Y.Max = 0, top*1.12 // room for the figures above the bars
	last := bars[len(bars)-1].x
	p.X.Min, p.X.Max = -0.7, last+0.7
	ticks := make(plot.ConstantTicks, 0, len(rep.Results))
	for g, r := range rep.Results {
		ticks = append(ticks, plot.Tick{Value: groupCentre(g), Label: fmt.Sprintf("N = %d", r.N)})
	}
	p.X.Tick.Marker = ticks
	p.X.Tick.Width = 0 // the groups need names, not tick marks
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)

	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font = sans(11)
	legend.Padding = vg.Points(4)
	entries := len(chartPhases)
	if runs > 1 {
		entries++
	}
	legendHeight := vg.Length(entries)*(legend.TextStyle.Rectangle("Xg").Size().Y+legend.Padding) + vg.Points(6)

	plotArea := draw.Crop(dc, vg.Points(6), vg.Points(-12), legendHeight+vg.Points(14), vg.Points(-8))
	// Bar widths are lengths on the canvas, not data units: 0.8 of the room one data unit gets.
	unit := p.DataCanvas(plotArea).Size().X / vg.Length(p.X.Max-p.X.Min)
	barWidth := min(0.8*unit, vg.Points(maxBarWidth))

	phaseBars := make([]*plotter.BarChart, len(chartPhases)) // one of each, for the legend
	var ring *plotter.Scatter
	labels := plotter.XYLabels{}
	for _, b := range bars {
		bc, err := plotter.NewBarChart(plotter.Values{b.value}, barWidth)
		if err != nil {
			return err
		}
		bc.XMin, bc.Color, bc.LineStyle.Width = b.x, chartPhases[b.phase].colour, 0
		p.Add(bc)
		phaseBars[b.phase] = bc
		labelY := b.value
		if len(b.runs) > 1 {
			if ring, err = addRuns(p, b, barWidth); err != nil {
				return err
			}
			labelY = slices.Max(b.runs)
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: b.x, Y: labelY})
		labels.Labels = append(labels.Labels, fmt.Sprintf("%.1f", b.value))
	}
	figures, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	figures.Offset = vg.Point{Y: vg.Points(5)}
	for i := range figures.TextStyle {
		figures.TextStyle[i].XAlign = draw.XCenter
		figures.TextStyle[i].Font = sans(11)
	}
	p.Add(figures)
	for k, ph := range chartPhases {
		legend.Add(ph.legend, phaseBars[k])
	}
	if ring != nil {
		legend.Add(fmt.Sprintf("each of the %d runs; whiskers from the quickest to the slowest; bar and figure: the run the table shows", runs),
			ring)
	}

	p.Draw(plotArea)
	legend.Draw(draw.Crop(dc, vg.Points(16), 0, vg.Points(6), -(chartHeight - legendHeight)))
	return nil
}

// addRuns draws every run of a bar as a ring and their range as a whisker, and returns the
// rings for the legend.
func addRuns(p *plot.Plot, b chartBar, barWidth vg.Length) (*plotter.Scatter, error) {
	lo, hi := slices.Min(b.runs), slices.Max(b.runs)
	whisker, err := plotter.NewYErrorBars(errorBar{x: b.x, y: b.value, low: b.value - lo, high: hi - b.value})
	if err != nil {
		return nil, err
	}
	whisker.CapWidth = barWidth / 3
	whisker.Width = vg.Points(1.2)
	xys := make(plotter.XYs, len(b.runs))
	for i, v := range b.runs {
		xys[i] = plotter.XY{X: b.x, Y: v}
	}
	rings, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	rings.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3), Shape: draw.RingGlyph{}}
	p.Add(whisker, rings)
	return rings, nil
}

func runsText(runs int) string {
	if runs == 1 {
		return "one run"
	}
	return fmt.Sprintf("%d runs", runs)
}

// errorBar is one vertical error bar: a point and how far its range reaches below and above.
type errorBar struct{ x, y, low, high float64 }

func (e errorBar) Len() int                       { return 1 }
func (e errorBar) XY(int) (x, y float64)          { return e.x, e.y }
func (e errorBar) YError(int) (low, high float64) { return e.low, e.high }
