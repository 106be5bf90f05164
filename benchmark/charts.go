package benchmark

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"time"

	"github.com/locklab/locklab/record"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart file names, linked from bench.md.
const (
	ChartPairs   = "pairs.svg"
	ChartSweep   = "sweep.svg"
	ChartHandoff = "handoff.svg"
	ChartWait    = "wait.svg"
	// ChartDecision places each lock by contended speed against the fault
	// scenarios it survives: the price of safety at a glance.
	ChartDecision = "decision.svg"
)

// Charts renders every chart the report's workloads allow, by file name.
// Rates and latencies span orders of magnitude between an in-process mutex
// and a ZooKeeper recipe, so every value axis is logarithmic.
func RenderCharts(rep *record.Bench) (map[string][]byte, error) {
	out := map[string][]byte{}
	add := func(name string, p *plot.Plot, h vg.Length, err error) error {
		if err != nil {
			return fmt.Errorf("chart %s: %w", name, err)
		}
		if p == nil {
			return nil
		}
		b, err := renderSVG(p, 9*vg.Inch, h)
		if err != nil {
			return fmt.Errorf("chart %s: %w", name, err)
		}
		out[name] = b
		return nil
	}
	rows := vg.Length(len(rep.Impls))
	p, err := pairsChart(rep)
	if err := add(ChartPairs, p, 1.6*vg.Inch+rows*0.42*vg.Inch, err); err != nil {
		return nil, err
	}
	p, err = sweepChart(rep)
	if err := add(ChartSweep, p, 6*vg.Inch, err); err != nil {
		return nil, err
	}
	p, err = distributionChart(rep, "Hand-off: release to the next different client's acquire (contended run)",
		"hand-off, ms (log scale)", func(r *record.BenchResult) []time.Duration { return r.HandoffSamples })
	if err := add(ChartHandoff, p, 1.4*vg.Inch+rows*0.32*vg.Inch, err); err != nil {
		return nil, err
	}
	p, err = distributionChart(rep, fmt.Sprintf("Acquire wait with %d clients on one key", rep.Settings.Clients),
		"wait, ms (log scale)", func(r *record.BenchResult) []time.Duration { return r.WaitSamples })
	if err := add(ChartWait, p, 1.4*vg.Inch+rows*0.32*vg.Inch, err); err != nil {
		return nil, err
	}
	p, err = decisionChart(rep)
	if err := add(ChartDecision, p, 6*vg.Inch, err); err != nil {
		return nil, err
	}
	return out, nil
}

func renderSVG(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// names returns the implementations' labels top to bottom: NominalY puts
// the first name at the bottom, so they are reversed.
func yNames(rep *record.Bench, keep func(*record.BenchResult) bool) (names []string, pos map[string]float64) {
	pos = map[string]float64{}
	var kept []string
	for i := range rep.Impls {
		if keep(&rep.Impls[i]) {
			kept = append(kept, rep.Impls[i].Name)
		}
	}
	for i, n := range kept {
		pos[n] = float64(len(kept) - 1 - i)
	}
	names = slices.Clone(kept)
	slices.Reverse(names)
	return names, pos
}

// positive keeps values drawable on a log axis.
func positive(v float64) float64 { return math.Max(v, 1e-3) }

// statPoints is a series of medians with min-max error bars.
type statPoints struct {
	plotter.XYs
	plotter.XErrors
}

func pairsChart(rep *record.Bench) (*plot.Plot, error) {
	series := []struct {
		name string
		get  func(*record.BenchResult) *record.Stat
	}{
		{"uncontended (1 client)", func(r *record.BenchResult) *record.Stat {
			if r.Uncontended == nil {
				return nil
			}
			return &r.Uncontended.PairsPerSec
		}},
		{fmt.Sprintf("contended (%d clients, one key)", rep.Settings.Clients), func(r *record.BenchResult) *record.Stat {
			if r.Contended == nil {
				return nil
			}
			return &r.Contended.PairsPerSec
		}},
		{fmt.Sprintf("independent keys (%d clients)", rep.Settings.Clients), func(r *record.BenchResult) *record.Stat {
			if r.Independent == nil {
				return nil
			}
			return &r.Independent.PairsPerSec
		}},
	}
	names, pos := yNames(rep, func(r *record.BenchResult) bool {
		for _, s := range series {
			if s.get(r) != nil {
				return true
			}
		}
		return false
	})
	if len(names) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = "Acquire-release pairs per second (median, bars: min–max over trials)"
	p.X.Label.Text = "pairs/s (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.NominalY(names...)
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	for si, s := range series {
		var pts statPoints
		for i := range rep.Impls {
			r := &rep.Impls[i]
			st := s.get(r)
			if st == nil {
				continue
			}
			y, ok := pos[r.Name]
			if !ok {
				continue
			}
			med := positive(st.Median)
			pts.XYs = append(pts.XYs, plotter.XY{X: med, Y: y + 0.22*float64(1-si)})
			pts.XErrors = append(pts.XErrors, struct{ Low, High float64 }{med - positive(st.Min), positive(st.Max) - med})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts.XYs)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = plotutil.Color(si)
		sc.GlyphStyle.Shape = plotutil.Shape(si)
		sc.GlyphStyle.Radius = vg.Points(3.5)
		eb, err := plotter.NewXErrorBars(pts)
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Color = plotutil.Color(si)
		p.Add(eb, sc)
		p.Legend.Add(s.name, sc)
	}
	return p, nil
}

func sweepChart(rep *record.Bench) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Contended pairs/s against the number of clients on one key (median)"
	p.X.Label.Text = "clients (log scale)"
	p.Y.Label.Text = "pairs/s (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = clientTicks(rep.Settings.Sweep)
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	p.Legend.Left = false
	p.Legend.Top = true
	n := 0
	for i := range rep.Impls {
		r := &rep.Impls[i]
		if len(r.Sweep) < 2 {
			continue
		}
		var xys plotter.XYs
		for _, sp := range r.Sweep {
			xys = append(xys, plotter.XY{X: float64(sp.Clients), Y: positive(sp.PairsPerSec.Median)})
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(n)
		l.Dashes = plotutil.Dashes(n / len(plotutil.SoftColors))
		pts.Color = plotutil.Color(n)
		pts.Shape = plotutil.Shape(n)
		p.Add(l, pts)
		p.Legend.Add(r.Name, l, pts)
		n++
	}
	if n == 0 {
		return nil, nil
	}
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return p, nil
}

// clientTicks labels exactly the client counts of the sweep.
type clientTicks []int

func (c clientTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for _, n := range c {
		out = append(out, plot.Tick{Value: float64(n), Label: fmt.Sprint(n)})
	}
	return out
}

// maxBoxSamples caps the points of one box: every k-th of the sorted
// samples keeps the distribution's shape and the SVG small.
const maxBoxSamples = 2000

func distributionChart(rep *record.Bench, title, xlabel string, samples func(*record.BenchResult) []time.Duration) (*plot.Plot, error) {
	names, pos := yNames(rep, func(r *record.BenchResult) bool { return len(samples(r)) > 0 })
	if len(names) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = title + " (box: quartiles, whiskers: 1.5 IQR)"
	p.X.Label.Text = xlabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.NominalY(names...)
	p.Add(plotter.NewGrid())
	for i := range rep.Impls {
		r := &rep.Impls[i]
		s := samples(r)
		if len(s) == 0 {
			continue
		}
		v := millis(s)
		slices.Sort(v)
		if len(v) > maxBoxSamples {
			step := float64(len(v)) / maxBoxSamples
			thin := make([]float64, 0, maxBoxSamples)
			for k := 0; k < maxBoxSamples; k++ {
				thin = append(thin, v[int(float64(k)*step)])
			}
			v = thin
		}
		vals := make(plotter.Values, len(v))
		for k, x := range v {
			vals[k] = positive(x)
		}
		bp, err := plotter.NewBoxPlot(vg.Points(12), pos[r.Name], vals)
		if err != nil {
			return nil, err
		}
		bp.Horizontal = true
		bp.FillColor = color.RGBA{R: 0x9e, G: 0xc5, B: 0xe8, A: 0xff}
		bp.GlyphStyle.Radius = vg.Points(1.2)
		p.Add(bp)
	}
	return p, nil
}

// decisionChart: x is contended pairs/s (log), y the fault scenarios the
// lock came through safe. Up and to the right is better; peers and the
// deliberately broken variants are drawn apart so that our correct locks
// can be read against them.
func decisionChart(rep *record.Bench) (*plot.Plot, error) {
	type point struct {
		x, y  float64
		label string
	}
	sets := []struct {
		name string
		pts  []point
	}{{name: "ours"}, {name: "peer libraries"}, {name: "ours, deliberately broken"}}
	lo, hi, top := math.Inf(1), 0.0, 0.0
	for i := range rep.Impls {
		r := &rep.Impls[i]
		if r.Contended == nil || r.Survives == nil || r.Contended.PairsPerSec.Median <= 0 {
			continue
		}
		pt := point{x: r.Contended.PairsPerSec.Median, y: float64(r.Survives.Safe),
			label: fmt.Sprintf("%s %d/%d", r.Name, r.Survives.Safe, r.Survives.Applied)}
		k := 0
		switch {
		case r.Peer:
			k = 1
		case r.Broken != "":
			k = 2
		}
		sets[k].pts = append(sets[k].pts, pt)
		lo, hi, top = math.Min(lo, pt.x), math.Max(hi, pt.x), math.Max(top, pt.y)
	}
	if hi == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Speed against safety: contended pairs/s (%d clients, one key) and fault scenarios survived", rep.Settings.Clients)
	p.X.Label.Text = "contended pairs/s, median (log scale)"
	p.Y.Label.Text = "fault scenarios survived without fencing"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	// Room for the labels right of the fastest point.
	p.X.Min, p.X.Max = lo/1.5, hi*2.5
	p.Y.Min, p.Y.Max = -0.5, top+1
	p.Y.Tick.Marker = countTicks(int(top) + 1)
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	// Labels of points at the same height and close in x would print over
	// each other: each next one goes a line lower.
	type placedLabel struct {
		pt   point
		line int
	}
	var placed []placedLabel
	for si, set := range sets {
		if len(set.pts) == 0 {
			continue
		}
		var xys plotter.XYs
		for _, pt := range set.pts {
			xys = append(xys, plotter.XY{X: pt.x, Y: pt.y})
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = plotutil.Color(si)
		sc.GlyphStyle.Shape = plotutil.Shape(si)
		sc.GlyphStyle.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(set.name, sc)
		for _, pt := range set.pts {
			taken := map[int]bool{}
			for _, q := range placed {
				if q.pt.y == pt.y && pt.x/q.pt.x < 2.5 && q.pt.x/pt.x < 2.5 {
					taken[q.line] = true
				}
			}
			line := 0
			for taken[line] {
				line++
			}
			placed = append(placed, placedLabel{pt, line})
			ls, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: pt.x, Y: pt.y}}, Labels: []string{pt.label}})
			if err != nil {
				return nil, err
			}
			ls.TextStyle[0].Font.Size = vg.Points(7)
			ls.TextStyle[0].Color = plotutil.Color(si)
			ls.TextStyle[0].YAlign = draw.YBottom
			ls.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(3 - 9*float64(line))}
			p.Add(ls)
		}
	}
	return p, nil
}

// countTicks labels every whole number from 0 to n.
type countTicks int

func (c countTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for i := 0; i <= int(c); i++ {
		out = append(out, plot.Tick{Value: float64(i), Label: fmt.Sprint(i)})
	}
	return out
}
