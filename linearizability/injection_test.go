package linearizability

import "testing"

// TestInjectionString: a fault's line for people names what it struck and
// what was done, and what the nemesis waited for before it struck, when it
// waited (the report shows this line for an event with no text of its own).
func TestInjectionString(t *testing.T) {
	tests := []struct {
		name string
		in   Injection
		want string
	}{
		{"kind and target", Injection{Kind: "server-kill", Target: "redis-1"}, "server-kill redis-1"},
		{"with a note", Injection{Kind: "client-pause", Target: "client-0", Note: "SIGSTOP; SIGCONT"},
			"client-pause client-0 (SIGSTOP; SIGCONT)"},
		{"with an await", Injection{Kind: "net-split-with-holder", Target: "master", Note: "healed",
			Awaited: "replica-acked: redis-1's master_repl_offset was 677 when the wait began; replica 10.0.0.3:6379 acknowledged 677 after 350ms"},
			"net-split-with-holder master (healed); awaited replica-acked: redis-1's master_repl_offset was 677 when the wait began; " +
				"replica 10.0.0.3:6379 acknowledged 677 after 350ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}
