package main

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/record"
)

// The report says where the matrix's time went: the shared cells' sum,
// then each reason for running alone with its cells and seconds, the
// costliest first; a matrix with no alone cell says nothing.
func TestTimeSpent(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cells []record.Cell
		want  []string // in this order
	}{
		{"none alone", []record.Cell{{Seconds: 10}, {Seconds: 5}}, nil},
		{"two reasons", []record.Cell{
			{Seconds: 10},
			{Seconds: 4, Alone: "server-restart: quick restart"},
			{Seconds: 30, Alone: "zk-ensemble: JVMs"},
			{Seconds: 20, Alone: "zk-ensemble: JVMs"},
		}, []string{
			"1 cell(s) shared the machine, 10s of cell time",
			"| zk-ensemble: JVMs | 2 | 50s |",
			"| server-restart: quick restart | 1 | 4s |",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := timeSpent(tt.cells)
			if tt.want == nil {
				if got != "" {
					t.Fatalf("got %q, want nothing", got)
				}
				return
			}
			at := 0
			for _, w := range tt.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("%q not found (in order) in:\n%s", w, got)
				}
				at += i + len(w)
			}
		})
	}
}
