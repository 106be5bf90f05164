package report

import "testing"

func TestTable(t *testing.T) {
	tests := []struct {
		name  string
		table func() *Table
		want  string
	}{
		{"headings, rule and rows", func() *Table {
			tb := NewTable("lock", "verdict")
			tb.Row("`redis`", "safe")
			tb.Row("`none`", "[unsafe](ce.html)")
			return tb
		}, "| lock | verdict |\n|---|---|\n| `redis` | safe |\n| `none` | [unsafe](ce.html) |\n"},
		{"no rows", func() *Table { return NewTable("a") }, "| a |\n|---|\n"},
		{"a pipe is escaped", func() *Table {
			tb := NewTable("detail")
			tb.Row("a | b")
			return tb
		}, "| detail |\n|---|\n| a \\| b |\n"},
		{"line breaks become spaces", func() *Table {
			tb := NewTable("detail")
			tb.Row("one\ntwo\r\nthree\rfour")
			return tb
		}, "| detail |\n|---|\n| one two three four |\n"},
		{"headings are escaped too", func() *Table { return NewTable("a|b") }, "| a\\|b |\n|---|\n"},
		{"an empty cell is padded like any other", func() *Table {
			tb := NewTable("a", "b", "c")
			tb.Row("x", "", "z")
			return tb
		}, "| a | b | c |\n|---|---|---|\n| x |  | z |\n"},
		{"cells left out are bare", func() *Table {
			tb := NewTable("a", "b", "c")
			tb.Row("x")
			return tb
		}, "| a | b | c |\n|---|---|---|\n| x | | |\n"},
		{"cells beyond the last column are kept", func() *Table {
			tb := NewTable("a")
			tb.Row("x", "y")
			return tb
		}, "| a |\n|---|\n| x | y |\n"},
		{"padded rule, right-aligned figures", func() *Table {
			tb := NewTable("lock", "pairs/s", "errors").AlignRight(1, 2, 7, -1).PadRule()
			tb.Row("`redis`", "1,200", "0")
			return tb
		}, "| lock | pairs/s | errors |\n| --- | ---: | ---: |\n| `redis` | 1,200 | 0 |\n"},
		{"right-aligned, tight rule", func() *Table { return NewTable("a", "b").AlignRight(1) }, "| a | b |\n|---|---:|\n"},
		{"untitled", func() *Table {
			tb := NewUntitledTable(2).PadRule()
			tb.Row("cores", "2")
			return tb
		}, "| | |\n| --- | --- |\n| cores | 2 |\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.table().String(); got != tc.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
