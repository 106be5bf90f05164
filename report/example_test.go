package report_test

import (
	"os"

	"github.com/locklab/locklab/report"
)

func ExampleTable() {
	t := report.NewTable("lock", "verdict", "detail")
	t.Row("`redis-setnx-px`", "safe", "")
	t.Row("`none`", "unsafe", "two holders | one counter")
	t.Row("`redlock`", "not run")
	t.WriteTo(os.Stdout)
	// Output:
	// | lock | verdict | detail |
	// |---|---|---|
	// | `redis-setnx-px` | safe |  |
	// | `none` | unsafe | two holders \| one counter |
	// | `redlock` | not run | |
}

func ExampleNewUntitledTable() {
	t := report.NewUntitledTable(2).PadRule()
	t.Row("cores", "2")
	t.Row("kernel", "6.8")
	t.WriteTo(os.Stdout)
	// Output:
	// | | |
	// | --- | --- |
	// | cores | 2 |
	// | kernel | 6.8 |
}
