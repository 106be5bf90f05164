package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/nemesis"
)

// A random schedule's step that cannot strike when its moment comes is
// skipped and named; a fixed schedule's, or any other failure, ends the
// run.
func TestNotStruck(t *testing.T) {
	notNow := fmt.Errorf("no lock server is the master now (redis-1: replica): %w", nemesis.ErrNotNow)
	for _, tc := range []struct {
		name     string
		schedule string // the schedule's name: "" for a random one
		err      error
		skipped  bool
	}{
		{"random, not now", "", notNow, true},
		{"fixed, not now", "sentinel-master-kill", notNow, false},
		{"random, another error", "", errors.New("inject: permission denied"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &scheduleRun{s: nemesis.Schedule{Name: tc.schedule, Faults: make([]nemesis.Step, 3)}, run: &ScheduleRun{},
				logf: func(string, ...any) {}}
			f := &strike{i: 1, st: nemesis.Step{Kind: nemesis.ServerPause, Target: nemesis.MasterTarget}, shown: nemesis.MasterTarget}
			err := r.notStruck(f, atTime{}, tc.err)
			if tc.skipped {
				if err != nil || len(r.run.NotStruck) != 1 || !strings.Contains(r.run.NotStruck[0], "fault 1 (server-pause master)") {
					t.Fatalf("notStruck = %v, NotStruck %q; want the step skipped and named", err, r.run.NotStruck)
				}
				return
			}
			if err == nil || !errors.Is(err, tc.err) || len(r.run.NotStruck) != 0 {
				t.Fatalf("notStruck = %v, NotStruck %q; want the run ended with %v", err, r.run.NotStruck, tc.err)
			}
		})
	}
}
