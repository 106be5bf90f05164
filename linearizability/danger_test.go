package linearizability

import "testing"

// The checker's danger window is drawn on the timeline as a row of its
// own, spanning the window, beside the faults' row.
func TestAnnotationsDrawTheDangerWindow(t *testing.T) {
	events := []Event{
		FaultEvent(100, 300, Injection{Kind: "client-pause", Target: "client-0", Clients: []int{0}}, ""),
		{Kind: Danger, Time: 1100, End: 2500, Client: 0, Value: 4, Text: "the lease ran out 1s after the grant"},
	}
	tests := []struct {
		tag        string
		start, end int64
	}{
		{"faults", 100, 300},
		{"danger window", 1100, 2500},
	}
	got := Annotations(events)
	if len(got) != len(tests) {
		t.Fatalf("%d annotations, want %d: %+v", len(got), len(tests), got)
	}
	for i, tc := range tests {
		if a := got[i]; a.Tag != tc.tag || a.Start != tc.start || a.End != tc.end {
			t.Errorf("annotation %d: %q %d..%d, want %q %d..%d", i, a.Tag, a.Start, a.End, tc.tag, tc.start, tc.end)
		}
	}
}
