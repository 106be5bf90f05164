package benchmark

import "testing"

// MONITOR shows the commands a Lua script calls with "lua" as their
// source; only the others cost a round trip.
func TestClientCommand(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{`+1700000000.123456 [0 127.0.0.1:5555] "evalsha" "abc" "1" "k"` + "\r\n", true},
		{`+1700000000.123457 [0 lua] "set" "k" "v" "NX" "PX" "2000"` + "\r\n", false},
		{`+1700000000.123458 [0 unix:/tmp/redis.sock] "del" "k"` + "\r\n", true},
		{`+1700000000.123459 [12 [::1]:6000] "get" "k"` + "\r\n", true},
		{"+OK\r\n", false},
		{"-ERR nope\r\n", false},
	}
	for _, tt := range tests {
		if got := clientCommand(tt.line); got != tt.want {
			t.Errorf("clientCommand(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

// A target is met only when its whole interval clears it; a median on
// the right side with an interval across the line is "within noise".
func TestTargetVerdict(t *testing.T) {
	six := func(v ...float64) Stat { return NewStat(v) }
	tests := []struct {
		name    string
		s       Stat
		want    float64
		atLeast bool
		verdict string
	}{
		{"clear above", six(1.6, 1.7, 1.65, 1.62, 1.68, 1.7), 1.5, true, "met"},
		{"median above, interval across", six(1.2, 1.7, 1.6, 1.55, 1.3, 1.8), 1.5, true, "met (within noise)"},
		{"clear below", six(1.0, 1.1, 1.05, 1.02, 1.08, 1.1), 1.5, true, "short"},
		{"median below, interval across", six(1.2, 1.6, 1.4, 1.3, 1.45, 1.55), 1.5, true, "short (within noise)"},
		{"at most, clear", six(0.1, 0.12, 0.11, 0.1, 0.13, 0.12), 0.25, false, "met"},
		{"too few trials for an interval", NewStat([]float64{1.6, 1.7}), 1.5, true, "met (within noise)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verdict(tt.s, tt.want, tt.atLeast); got != tt.verdict {
				t.Errorf("verdict = %q, want %q (stat %+v)", got, tt.verdict, tt.s)
			}
		})
	}
}
