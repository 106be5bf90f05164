package engine

import "testing"

// TestPickHolder: the holder is the client inside its section, the one
// granted first when two are; with none inside, the fallback is the
// client still running that was granted last, never one that left the
// run (a fault aimed at it would find no process to strike).
func TestPickHolder(t *testing.T) {
	type w struct {
		in      bool
		granted int64
		running bool
	}
	for _, tc := range []struct {
		name     string
		workers  []w
		in, last int
	}{
		{"one inside", []w{{false, 10, true}, {true, 20, true}}, 1, 1},
		{"two inside: the first granted", []w{{true, 30, true}, {true, 20, true}}, 1, 0},
		{"none inside: the last granted", []w{{false, 30, true}, {false, 20, true}}, -1, 0},
		{"none inside, the last granted left", []w{{false, 30, false}, {false, 20, true}}, -1, 1},
		{"none granted yet", []w{{false, 0, true}, {false, 0, true}}, -1, -1},
		{"every one granted left", []w{{false, 30, false}, {false, 20, false}}, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var watches []*sectionWatch
			var running []bool
			for _, x := range tc.workers {
				watches = append(watches, &sectionWatch{in: x.in, granted: x.granted})
				running = append(running, x.running)
			}
			if in, last := pickHolder(watches, running); in != tc.in || last != tc.last {
				t.Errorf("pickHolder = %d, %d; want %d, %d", in, last, tc.in, tc.last)
			}
		})
	}
}
