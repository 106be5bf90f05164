package lessons

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"

	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
)

// Section is one critical section rebuilt from a history: from its call to
// its return, with what it read, wrote and the token it carried.
type Section struct {
	Client   int
	Op       int64
	Call     int64
	Ret      int64 // 0: never returned (the client died)
	End      int64 // where the bar stops: the return, the client's kill, or the history's end
	Read     int64
	HasRead  bool
	Wrote    int64
	Status   lin.Status
	Token    uint64
	Conflict bool // part of the anomaly: overlaps or read a value another section also read
}

// end is where the bar stops.
func (s Section) end(int64) int64 { return s.End }

// Sections rebuilds every critical section of a history, in call order, and
// marks the ones that conflict: two sections of different clients that
// overlap in time, or two completed sections that read the same value (a
// lost update, which is what porcupine rejects).
func Sections(events []lin.Event) []Section {
	type key struct {
		c  int
		op int64
	}
	idx := map[key]int{}
	var out []Section
	for _, e := range events {
		k := key{e.Client, e.Op}
		switch e.Kind {
		case lin.Call:
			idx[k] = len(out)
			out = append(out, Section{Client: e.Client, Op: e.Op, Call: e.Time, Token: e.Token, Status: lin.Unknown})
		case lin.Read:
			if i, ok := idx[k]; ok {
				out[i].Read, out[i].HasRead = e.Value, true
			}
		case lin.Return:
			if i, ok := idx[k]; ok {
				out[i].Ret, out[i].Status = e.Time, e.Status
				if e.Status == lin.OK {
					out[i].Wrote = e.Value
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Call < out[j].Call })
	lastT := lastTime(events)
	// A section that never returned ends where its client was killed.
	kills := map[int][]int64{}
	for _, e := range events {
		if e.Kind == lin.Fault && e.Injection != nil && e.Injection.Kind == nemesis.ClientKill {
			for _, c := range e.Injection.Clients {
				kills[c] = append(kills[c], e.Time)
			}
		}
	}
	for i := range out {
		s := &out[i]
		s.End = s.Ret
		if s.Ret == 0 {
			s.End = lastT
			for _, k := range kills[s.Client] {
				if k >= s.Call {
					s.End = k
					break
				}
			}
		}
	}
	// Overlaps: sweep in call order keeping the sections still open.
	var open []int
	for i := range out {
		kept := open[:0]
		for _, j := range open {
			if out[j].end(lastT) > out[i].Call {
				kept = append(kept, j)
			}
		}
		open = kept
		for _, j := range open {
			if out[j].Client != out[i].Client && wrote(out[j]) && wrote(out[i]) {
				out[i].Conflict, out[j].Conflict = true, true
			}
		}
		open = append(open, i)
	}
	// Lost updates: two sections that both wrote after reading the same value.
	byRead := map[int64][]int{}
	for i, s := range out {
		if s.HasRead && s.Status == lin.OK {
			byRead[s.Read] = append(byRead[s.Read], i)
		}
	}
	for _, is := range byRead {
		if len(is) > 1 {
			for _, i := range is {
				out[i].Conflict = true
			}
		}
	}
	return out
}

// wrote says whether a section may have changed the resource: refused and
// aborted sections wrote nothing, so their overlap harms no one.
func wrote(s Section) bool { return s.Status == lin.OK || s.Status == lin.Unknown }

func lastTime(events []lin.Event) int64 {
	var t int64
	for _, e := range events {
		t = max(t, e.Time, e.End)
	}
	return t
}

// faultClient returns the one client a fault struck, or -1 for a fault
// on servers (which every client meets) or on several clients.
func faultClient(f lin.Event) int {
	if f.Injection == nil || len(f.Injection.Clients) != 1 {
		return -1
	}
	return f.Injection.Clients[0]
}

// refusedRun is a stretch of failed acquires by one client, drawn as one
// dashed line instead of thousands of marks.
type refusedRun struct {
	client      int
	first, last int64
	n           int
}

// selection is what the timeline draws: a readable excerpt of a history
// that still contains the anomaly and what led to it.
type selection struct {
	sections []Section
	faults   []lin.Event
	ticks    []lin.Event // acquired and released
	refused  []refusedRun
	clients  []int
	lastT    int64
}

// maxFocus bounds the conflicting sections the excerpt is built around.
const maxFocus = 6

// selectExcerpt picks the sections around the first anomaly (or the first
// fault, or the start of the run): the conflicting ones, and for every other
// client the sections in progress or adjacent at each moment that matters.
func selectExcerpt(events []lin.Event) selection {
	all := Sections(events)
	sel := selection{lastT: lastTime(events)}
	var faults []lin.Event
	for _, e := range events {
		if e.Kind == lin.Fault {
			faults = append(faults, e)
		}
	}
	sel.faults = faults

	chosen := map[int]bool{}
	var anchors []int64
	for _, f := range faults {
		anchors = append(anchors, f.Time)
		if f.End > f.Time {
			anchors = append(anchors, f.End)
		}
	}
	// Focus: the first few conflicting or unusual sections, with the other
	// sections that read the same value (the other half of a lost update).
	focus := 0
	for i, s := range all {
		if focus >= maxFocus {
			break
		}
		if !s.Conflict && s.Status == lin.OK {
			continue
		}
		if chosen[i] {
			continue
		}
		chosen[i] = true
		focus++
		anchors = append(anchors, s.Call, s.end(sel.lastT))
		for j, o := range all {
			if j != i && o.HasRead && s.HasRead && o.Read == s.Read && o.Status == lin.OK && s.Status == lin.OK && !chosen[j] {
				chosen[j] = true
				anchors = append(anchors, o.Call, o.end(sel.lastT))
			}
		}
	}
	// A section in progress when a fault struck belongs to the story.
	for _, f := range faults {
		for i, s := range all {
			if s.Call <= f.Time && f.Time <= s.end(sel.lastT) {
				chosen[i] = true
			}
		}
	}
	if len(anchors) == 0 && len(all) > 0 {
		anchors = append(anchors, all[0].Call)
	}
	// Context: at each anchor, each client's section in progress, or its
	// nearest sections before and after.
	byClient := map[int][]int{}
	for i, s := range all {
		byClient[s.Client] = append(byClient[s.Client], i)
	}
	for _, a := range anchors {
		for _, is := range byClient {
			before, after := -1, -1
			for _, i := range is {
				s := all[i]
				switch {
				case s.Call <= a && a <= s.end(sel.lastT):
					chosen[i] = true
				case s.end(sel.lastT) < a:
					before = i
				case s.Call > a && after < 0:
					after = i
				}
			}
			if before >= 0 {
				chosen[before] = true
			}
			if after >= 0 {
				chosen[after] = true
			}
		}
	}
	// Without any anomaly or fault, show the run's first sections.
	if len(faults) == 0 && focus == 0 {
		for i := range all {
			if i < 12 {
				chosen[i] = true
			}
		}
	}
	clientSet := map[int]bool{}
	for i, s := range all {
		if chosen[i] {
			sel.sections = append(sel.sections, s)
			clientSet[s.Client] = true
		}
	}
	for _, f := range faults {
		if c := faultClient(f); c >= 0 {
			clientSet[c] = true
		}
	}
	// Ticks: the grant just before and the release just after each drawn
	// section of the same client.
	for _, s := range sel.sections {
		var grant, rel *lin.Event
		for k := range events {
			e := &events[k]
			if e.Client != s.Client {
				continue
			}
			if e.Kind == lin.Acquired && e.Time <= s.Call && (grant == nil || e.Time > grant.Time) {
				grant = e
			}
			if e.Kind == lin.Released && e.Time >= s.end(sel.lastT) && (rel == nil || e.Time < rel.Time) {
				rel = e
			}
		}
		if grant != nil {
			sel.ticks = append(sel.ticks, *grant)
		}
		if rel != nil && (s.Ret != 0) {
			sel.ticks = append(sel.ticks, *rel)
		}
	}
	// Refused acquires: runs between grants, per client; only runs long
	// enough to matter (a waiter failing many times, as in a stuck lock).
	runs := map[int]*refusedRun{}
	flush := func(c int) {
		if r := runs[c]; r != nil && r.n >= 3 {
			sel.refused = append(sel.refused, *r)
			clientSet[c] = true
		}
		delete(runs, c)
	}
	for _, e := range events {
		switch e.Kind {
		case lin.AcquireFailed:
			r := runs[e.Client]
			if r == nil {
				r = &refusedRun{client: e.Client, first: e.Time}
				runs[e.Client] = r
			}
			r.last, r.n = e.Time, r.n+1
		case lin.Acquired:
			flush(e.Client)
		}
	}
	for c := range runs {
		flush(c)
	}
	sort.Slice(sel.refused, func(i, j int) bool { return sel.refused[i].first < sel.refused[j].first })
	for c := range clientSet {
		sel.clients = append(sel.clients, c)
	}
	sort.Ints(sel.clients)
	return sel
}

// TimelineOptions tune the drawing.
type TimelineOptions struct {
	Title    string
	MaxWidth int    // pixels for the time axis; default 1100
	Note     string // one line under the legend (e.g. the run's detail)
}

// faultLevels puts each fault's label on the lowest level where it does not
// run into an earlier label; it returns each label's level and the count.
func faultLevels(faults []lin.Event, ax *axis, left float64) ([]int, int) {
	var levelEnd []float64
	levelOf := make([]int, len(faults))
	for k, f := range faults {
		x0, w := left+ax.x(f.Time), 8+float64(len([]rune(f.Text)))*5.4
		lv := 0
		for lv < len(levelEnd) && levelEnd[lv] > x0 {
			lv++
		}
		if lv == len(levelEnd) {
			levelEnd = append(levelEnd, 0)
		}
		levelEnd[lv] = x0 + w
		levelOf[k] = lv
	}
	return levelOf, len(levelEnd)
}

// axis maps the excerpt's moments to x positions on a compressed time axis:
// order is kept exactly, but a long stretch where nothing drawn happens is
// cut to a fixed gap and marked as a break with its real length.
type axis struct {
	times  []int64
	xs     []float64
	breaks []axisBreak
}

type axisBreak struct {
	x   float64
	dur int64
}

const (
	minGap = 3.0  // px between two distinct moments
	maxGap = 46.0 // px a break takes
)

func newAxis(times []int64, width float64, wantSection float64, typical int64) *axis {
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	uniq := times[:0]
	for i, t := range times {
		if i == 0 || t != uniq[len(uniq)-1] {
			uniq = append(uniq, t)
		}
	}
	build := func(scale float64) *axis {
		a := &axis{times: uniq, xs: make([]float64, len(uniq))}
		x := 0.0
		for i := 1; i < len(uniq); i++ {
			dt := uniq[i] - uniq[i-1]
			px := float64(dt) * scale
			switch {
			case px > maxGap*2:
				a.breaks = append(a.breaks, axisBreak{x: x + maxGap/2, dur: dt})
				px = maxGap
			case px < minGap:
				px = minGap
			}
			x += px
			a.xs[i] = x
		}
		return a
	}
	// Aim for a typical section wide enough for its label, then shrink
	// until the whole excerpt fits the width.
	scale := wantSection / math.Max(float64(typical), 1)
	a := build(scale)
	for i := 0; i < 60 && len(a.xs) > 0 && a.xs[len(a.xs)-1] > width; i++ {
		scale *= 0.8
		a = build(scale)
	}
	return a
}

// x returns the position of t, interpolating between known moments.
func (a *axis) x(t int64) float64 {
	i := sort.Search(len(a.times), func(i int) bool { return a.times[i] >= t })
	switch {
	case len(a.times) == 0:
		return 0
	case i < len(a.times) && a.times[i] == t:
		return a.xs[i]
	case i == 0:
		return a.xs[0]
	case i == len(a.times):
		return a.xs[len(a.xs)-1]
	}
	f := float64(t-a.times[i-1]) / float64(a.times[i]-a.times[i-1])
	return a.xs[i-1] + f*(a.xs[i]-a.xs[i-1])
}

func (a *axis) width() float64 {
	if len(a.xs) == 0 {
		return 0
	}
	return a.xs[len(a.xs)-1]
}

// Timeline draws an excerpt of a recorded history as SVG text: one row per
// client, each critical section a bar labelled with what it read, wrote
// and its fencing token, conflicting sections in red, faults as shaded
// spans, grants and releases as ticks, runs of refused acquires as dashed
// lines, and long quiet stretches cut out as marked breaks.
func Timeline(events []lin.Event, opt TimelineOptions) string {
	if opt.MaxWidth <= 0 {
		opt.MaxWidth = 1100
	}
	events = append([]lin.Event(nil), events...)
	lin.SortEvents(events)
	sel := selectExcerpt(events)

	var times []int64
	var durs []int64
	for _, s := range sel.sections {
		times = append(times, s.Call, s.end(sel.lastT))
		durs = append(durs, s.end(sel.lastT)-s.Call)
	}
	for _, f := range sel.faults {
		times = append(times, f.Time)
		if f.End > f.Time {
			times = append(times, f.End)
		}
	}
	for _, t := range sel.ticks {
		times = append(times, t.Time)
	}
	for _, r := range sel.refused {
		times = append(times, r.first, r.last)
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	typical := int64(1)
	if len(durs) > 0 {
		typical = durs[len(durs)/2]
	}
	ax := newAxis(times, float64(opt.MaxWidth), 78, typical)

	const (
		left   = 78.0
		rowH   = 46.0
		right  = 110.0
		legend = 62.0
	)
	top := 42.0
	// Room above the rows for the fault labels (computed below; at most a
	// few levels in practice).
	_, levels := faultLevels(sel.faults, ax, left)
	top += 12 * float64(max(levels-1, 0))
	row := map[int]int{}
	for i, c := range sel.clients {
		row[c] = i
	}
	nrows := max(len(sel.clients), 1)
	W := left + ax.width() + right
	W = math.Max(W, 620)
	H := top + float64(nrows)*rowH + legend
	if opt.Note != "" {
		H += 18
	}
	X := func(t int64) float64 { return left + ax.x(t) }
	Y := func(c int) float64 { return top + float64(row[c])*rowH }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif" font-size="11">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	if opt.Title != "" {
		fmt.Fprintf(&b, `<text x="8" y="16" font-size="13" font-weight="bold">%s</text>`+"\n", esc(opt.Title))
	}
	// Rows.
	for i, c := range sel.clients {
		y := top + float64(i)*rowH
		if i%2 == 1 {
			fmt.Fprintf(&b, `<rect x="0" y="%.1f" width="%.0f" height="%.0f" fill="#f6f6f6"/>`+"\n", y, W, rowH)
		}
		fmt.Fprintf(&b, `<text x="8" y="%.1f" fill="#333">client %d</text>`+"\n", y+rowH/2+4, c)
	}
	// Faults: a span over the faulted client's row (or every row), with
	// its text; an instant fault is a thick line.
	levelOf, levels := faultLevels(sel.faults, ax, left)
	for k, f := range sel.faults {
		y0, h := top, float64(nrows)*rowH
		if c := faultClient(f); c >= 0 {
			if _, ok := row[c]; ok {
				y0, h = Y(c), rowH
			}
		}
		x0 := X(f.Time)
		ly := top - 6 - float64(levels-1-levelOf[k])*12
		if f.End > f.Time {
			fmt.Fprintf(&b, `<rect class="fault" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#ff9800" fill-opacity="0.22" stroke="#e65100" stroke-dasharray="3,2"/>`+"\n",
				x0, y0, math.Max(X(f.End)-x0, 2), h)
		} else {
			fmt.Fprintf(&b, `<line class="fault" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e65100" stroke-width="3"/>`+"\n", x0, y0, x0, y0+h)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#e65100" font-size="10">⚡ %s</text>`+"\n", x0+2, ly, esc(f.Text))
	}
	// Breaks in the time axis.
	lastLabel := math.Inf(-1)
	for _, br := range ax.breaks {
		x := left + br.x
		if x-lastLabel > 52 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#777" font-size="9" text-anchor="middle">≈%s</text>`+"\n", x, top+float64(nrows)*rowH+11, fmtDur(br.dur))
			lastLabel = x
		}
		fmt.Fprintf(&b, `<line class="break" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="2,3"/>`+"\n", x, top-2, x, top+float64(nrows)*rowH)
	}
	// Refused acquires.
	for _, r := range sel.refused {
		y := Y(r.client) + rowH - 7
		fmt.Fprintf(&b, `<line class="refused" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#777" stroke-dasharray="4,3"/>`+"\n", X(r.first), y, math.Max(X(r.last), X(r.first)+2), y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#555" font-size="9">acquire refused ×%d</text>`+"\n", X(r.first)+2, y-2, r.n)
	}
	// Grant and release ticks.
	for _, t := range sel.ticks {
		if _, ok := row[t.Client]; !ok {
			continue
		}
		x, y := X(t.Time), Y(t.Client)
		color := "#2e7d32"
		if t.Kind == lin.Released {
			color = "#37474f"
		}
		fmt.Fprintf(&b, `<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", t.Kind, x, y+14, x, y+rowH-10, color)
	}
	// Critical sections, labels staggered on two levels.
	for i, s := range sel.sections {
		x0, x1 := X(s.Call), X(s.end(sel.lastT))
		y := Y(s.Client)
		fill, stroke, dash := "#9ecae1", "#3182bd", ""
		switch {
		case s.Status == lin.Refused:
			fill, stroke, dash = "#e0e0e0", "#757575", ` stroke-dasharray="3,2"`
		case s.Status == lin.Aborted:
			fill, stroke = "#eeeeee", "#9e9e9e"
		case s.Status == lin.Unknown:
			fill, stroke, dash = "#ffe0b2", "#ef6c00", ` stroke-dasharray="3,2"`
		}
		if s.Conflict {
			fill, stroke = "#f8a5a5", "#c62828"
		}
		fmt.Fprintf(&b, `<rect class="section" x="%.1f" y="%.1f" width="%.1f" height="14" rx="2" fill="%s" stroke="%s"%s><title>%s</title></rect>`+"\n",
			x0, y+18, math.Max(x1-x0, 2), fill, stroke, dash, esc(describe(s)))
		ly := y + 13
		if i%2 == 1 {
			ly = y + 43
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" fill="#222">%s</text>`+"\n", x0, ly, esc(label(s)))
	}
	// Time labels: the start, and the moment after each break.
	// Legend.
	ly := top + float64(nrows)*rowH + 30
	lx := 8.0
	item := func(sw, text string) {
		if w := 28 + float64(len([]rune(text)))*5.6; lx+w > W {
			lx, ly = 8, ly+16
		}
		fmt.Fprintf(&b, `<g transform="translate(%.0f,%.0f)">%s<text x="22" y="10" font-size="10">%s</text></g>`+"\n", lx, ly, sw, esc(text))
		lx += 28 + float64(len(text))*5.6
	}
	item(`<rect width="18" height="10" fill="#9ecae1" stroke="#3182bd"/>`, "critical section (r read, w wrote, #token)")
	item(`<rect width="18" height="10" fill="#f8a5a5" stroke="#c62828"/>`, "conflicting (overlap or lost update)")
	item(`<rect width="18" height="10" fill="#e0e0e0" stroke="#757575" stroke-dasharray="3,2"/>`, "refused (stale token)")
	item(`<rect width="18" height="10" fill="#ffe0b2" stroke="#ef6c00" stroke-dasharray="3,2"/>`, "unknown outcome")
	item(`<rect width="18" height="10" fill="#ff9800" fill-opacity="0.3" stroke="#e65100"/>`, "fault")
	item(`<line x1="4" y1="0" x2="4" y2="11" stroke="#2e7d32" stroke-width="2"/><line x1="12" y1="0" x2="12" y2="11" stroke="#37474f" stroke-width="2"/>`, "grant / release")
	item(`<line x1="0" y1="6" x2="18" y2="6" stroke="#999" stroke-dasharray="2,3"/>`, "≈ time cut out")
	if opt.Note != "" {
		fmt.Fprintf(&b, `<text x="8" y="%.0f" font-size="11" fill="#333">%s</text>`+"\n", ly+26, esc(opt.Note))
	}
	fmt.Fprintf(&b, "</svg>\n")
	return b.String()
}

func label(s Section) string {
	var parts []string
	if s.HasRead {
		parts = append(parts, fmt.Sprintf("r%d", s.Read))
	}
	switch s.Status {
	case lin.OK:
		parts = append(parts, fmt.Sprintf("w%d", s.Wrote))
	case lin.Refused:
		parts = append(parts, "refused")
	case lin.Aborted:
		parts = append(parts, "aborted")
	default:
		parts = append(parts, "w?")
	}
	if s.Token != 0 {
		parts = append(parts, fmt.Sprintf("#%d", s.Token))
	}
	return strings.Join(parts, " ")
}

func describe(s Section) string {
	return fmt.Sprintf("client %d, section %d: %s (%s, %s)", s.Client, s.Op, label(s), s.Status, fmtDur(s.Ret-s.Call))
}

func fmtDur(ns int64) string {
	switch {
	case ns < 0:
		return "?"
	case ns >= 1e9:
		return strconv.FormatFloat(float64(ns)/1e9, 'f', 2, 64) + " s"
	case ns >= 1e6:
		return strconv.FormatFloat(float64(ns)/1e6, 'f', 1, 64) + " ms"
	default:
		return strconv.FormatFloat(float64(ns)/1e3, 'f', 0, 64) + " µs"
	}
}

func esc(s string) string { return html.EscapeString(s) }
