package main

import (
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The bars are each phase's wall time per MyApp, so that every N shares the axis; each run
// is kept for the spread, and a single run has none.
func TestChartBars(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	rep := report{Results: []result{
		{N: 10, Raw: ms(50), Least: ms(80), LeastRequests: ms(90), Settle: ms(120)},
		{N: 100, Raw: ms(400), Least: ms(700), LeastRequests: ms(800), Settle: ms(1000), LeastWatched: ms(750),
			Runs: []runTimes{
				{Raw: ms(400), Least: ms(700), LeastRequests: ms(800), Settle: ms(1000)},
				{Raw: ms(500), Least: ms(600), LeastRequests: ms(900), Settle: ms(1300)},
			}},
	}}
	want := []chartBar{
		{x: 0, phase: 0, value: 5}, {x: 1, phase: 1, value: 8}, {x: 2, phase: 2, value: 9}, {x: 3, phase: 3, value: 12},
		{x: 5, phase: 0, value: 4, runs: []float64{4, 5}}, {x: 6, phase: 1, value: 7, runs: []float64{7, 6}},
		{x: 7, phase: 2, value: 8, runs: []float64{8, 9}}, {x: 8, phase: 3, value: 10, runs: []float64{10, 13}},
	}
	if got := chartBars(rep); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v,\nwant %+v", got, want)
	}
	if c := groupCentre(1); c != 6.5 {
		t.Errorf("the second group's centre: got %v, want 6.5", c)
	}
}

// The chart is drawn for one run and for several, and is a PNG of the chart's size.
func TestWritePlot(t *testing.T) {
	s := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	one := result{N: 1000, Raw: s(7.2), Least: s(12.3), LeastWatched: s(14.1), LeastRequests: s(12), Settle: s(16.4)}
	several := one
	several.Runs = []runTimes{runOf(7.9, 17.33, 11.68, 10.98, 14.79), one.times(), runOf(7.1, 16.41, 12.18, 13.2, 14.03)}
	for name, rep := range map[string]report{
		"one run": {Results: []result{one}},
		"runs of two sizes": {Results: []result{{N: 100, Raw: s(1), Least: s(1.8), LeastRequests: s(2), Settle: s(2.5),
			Runs: []runTimes{runOf(1, 2.5, 1.8, 1.9, 2), runOf(1.2, 3, 2, 2, 2.4)}}, several}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if d := os.Getenv("CHART_DIR"); d != "" {
				dir = d
			}
			path := filepath.Join(dir, name+".png")
			if err := writePlot(path, rep); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != int(chartWidth.Dots(96)) || b.Dy() != int(chartHeight.Dots(96)) {
				t.Errorf("a %dx%d image", b.Dx(), b.Dy())
			}
		})
	}
}
