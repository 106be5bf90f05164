package cluster

import "testing"

// TestPositionLacks compares a promoted replica's position with its
// master's as the servers give them: Redis offsets and PostgreSQL WAL
// positions as bytes, MariaDB GTID lists per domain as transactions.
func TestPositionLacks(t *testing.T) {
	lsn := func(s string) Position {
		n, err := parseLSN(s)
		if err != nil {
			t.Fatal(err)
		}
		return Position{Unit: "bytes", at: map[string]int64{"": n}}
	}
	gtid := func(s string) Position {
		p, err := gtidPosition("x", s, s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name            string
		master, replica Position
		want            int64
	}{
		{"redis, had everything", redisOffset("m", "master_repl_offset", 5238), redisOffset("r", "slave_repl_offset", 5238), 0},
		{"redis, 37 bytes behind", redisOffset("m", "master_repl_offset", 5238), redisOffset("r", "slave_repl_offset", 5201), 37},
		{"redis, ahead (wrote since)", redisOffset("m", "master_repl_offset", 5238), redisOffset("r", "second_repl_offset-1", 5300), 0},
		{"WAL across the high word", lsn("1/0"), lsn("0/FFFFFF00"), 256},
		{"WAL had everything", lsn("0/3000148"), lsn("0/3000148"), 0},
		{"GTID one transaction behind", gtid("0-1-57"), gtid("0-1-56"), 1},
		{"GTID a domain the replica never saw", gtid("0-1-57,1-1-3"), gtid("0-1-57"), 3},
		{"GTID had everything", gtid("0-1-57"), gtid("0-1-57"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.replica.Lacks(tt.master); got != tt.want {
				t.Errorf("lacks %d, want %d", got, tt.want)
			}
		})
	}
}

// TestParseLSN refuses what is not a WAL position.
func TestParseLSN(t *testing.T) {
	for _, s := range []string{"", "0", "x/1", "1/y"} {
		if _, err := parseLSN(s); err == nil {
			t.Errorf("parseLSN(%q) gave no error", s)
		}
	}
	if n, err := parseLSN("16/B374D848"); err != nil || n != 0x16B374D848 {
		t.Errorf("parseLSN(16/B374D848) = %x, %v", n, err)
	}
}
