package nemesis

// Measurer is a Kind that measures the servers while its fault holds (a
// split brain: when a replica was promoted, until when the old master
// accepted writes) and hands the numbers over once it is healed, as
// figures of the run (engine.ScheduleRun.Figures): what the servers did,
// beside what the history says the clients saw. Figures only: the
// verdict is the checker's.
type Measurer interface {
	// Measured returns the figures of the fault healed on target, and
	// forgets them; nil when it measured nothing.
	Measured(sys System, target string) map[string]float64
}
