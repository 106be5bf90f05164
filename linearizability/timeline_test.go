package linearizability

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// expandTimeline is what the browser runs when a compact timeline opens:
// the script and data CompactTimeline packed.
func expandTimeline(t *testing.T, page []byte) string {
	t.Helper()
	s, err := TimelineScript(page)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCompactTimelineKeepsThePageAndPacksTheScript(t *testing.T) {
	script := "\n  render(data)\n  const data = {\"x\": \"" + strings.Repeat("operation ", 500) + "\"}\n"
	page := []byte("<html><head>" + timelineTitle + "<style>s</style></head><body><div id=\"canvas\"></div>\n<script>" + script + "</script>\n</body></html>\n")
	compact, changed, err := CompactTimeline(page)
	if err != nil {
		t.Fatal(err)
	}
	if !changed || len(compact) >= len(page) {
		t.Fatalf("compact page is %d bytes, changed %t, from %d", len(compact), changed, len(page))
	}
	if got := expandTimeline(t, compact); got != script {
		t.Errorf("unpacked script differs from the page's:\n%q\nwant\n%q", got, script)
	}
	for _, want := range []string{`<div id="canvas"></div>`, "<style>s</style>", "</body></html>\n", "DecompressionStream"} {
		if !bytes.Contains(compact, []byte(want)) {
			t.Errorf("compact page lacks %q", want)
		}
	}
	if !IsTimeline(page) || !IsTimeline(compact) || IsCompactTimeline(page) || !IsCompactTimeline(compact) {
		t.Error("a timeline is not told from a compact one by IsTimeline and IsCompactTimeline")
	}
	again, changed, err := CompactTimeline(compact)
	if err != nil || changed || !bytes.Equal(again, compact) {
		t.Errorf("compacting a compact page changed it (changed %t, err %v)", changed, err)
	}
	if _, _, err := CompactTimeline([]byte("<html>no script</html>")); err == nil {
		t.Error("a page without a script compacted")
	}
}

func TestHistoriesReadBackGzippedOrPlain(t *testing.T) {
	h := cs(cs(nil, 0, 1, 10, 30, 0, OK, 0), 1, 1, 15, 40, 0, OK, 0)
	h = append(h, Event{Kind: Fault, Time: 12, End: 25, Text: "SIGSTOP client 0"})
	for _, tc := range []struct {
		name    string
		gzipped bool
	}{
		{"x.history.jsonl", false},
		{"x.history.jsonl" + CompressedSuffix, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.name)
			if err := WriteEvents(path, h); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(b) > 1 && b[0] == 0x1f && b[1] == 0x8b; got != tc.gzipped {
				t.Errorf("gzipped = %t, want %t", got, tc.gzipped)
			}
			back, err := ReadEventsFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(back) != len(h) {
				t.Fatalf("read %d events, wrote %d", len(back), len(h))
			}
			for i := range h {
				if back[i].Kind != h[i].Kind || back[i].Time != h[i].Time || back[i].Text != h[i].Text {
					t.Errorf("event %d: read %+v, wrote %+v", i, back[i], h[i])
				}
			}
		})
	}
}

func TestWriteHTMLIsCompact(t *testing.T) {
	h := cs(cs(nil, 0, 1, 10, 30, 0, OK, 0), 1, 1, 15, 40, 0, OK, 0)
	path, err := Check(h, 5*time.Second).WriteHTML(filepath.Join(t.TempDir(), "x.html"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(compactMark)) {
		t.Error("WriteHTML wrote a timeline that is not compact")
	}
}
