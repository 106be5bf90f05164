package report

import (
	"io"
	"strings"
)

// Table is one markdown table: a heading row, a rule, then rows of cells.
// Cells are markdown already (links, code, emphasis); Table only keeps
// each one inside its column, escaping "|" (which would end the cell) and
// turning line breaks (which would end the row) into spaces.
type Table struct {
	headings []string // nil for an untitled table
	rules    []string // per column: "---", or "---:" aligned right
	padRule  bool
	rows     [][]string
}

// NewTable starts a table with these column headings, every column
// aligned left and the rule written tight: |---|---|.
func NewTable(headings ...string) *Table {
	return &Table{headings: headings, rules: leftRules(len(headings))}
}

// NewUntitledTable starts a table of columns without headings, such as a
// list of names and values. Markdown still needs a heading row: it is
// written with nothing between the bars, | | |.
func NewUntitledTable(columns int) *Table {
	return &Table{rules: leftRules(columns)}
}

func leftRules(n int) []string {
	rules := make([]string, n)
	for i := range rules {
		rules[i] = "---"
	}
	return rules
}

// AlignRight aligns the given columns (counted from 0) right, as figures
// read best; a column out of range is ignored.
func (t *Table) AlignRight(columns ...int) *Table {
	for _, c := range columns {
		if c >= 0 && c < len(t.rules) {
			t.rules[c] = "---:"
		}
	}
	return t
}

// PadRule writes the rule with a space either side of each column's
// dashes, | --- | ---: |, as the benchmark's tables always have.
func (t *Table) PadRule() *Table {
	t.padRule = true
	return t
}

// Row adds a row. A row with fewer cells than the table has columns ends
// in cells left out, written with nothing between the bars (| |), while an
// empty cell given is written |  | like any other; cells beyond the last
// column are written too, and markdown drops them.
func (t *Table) Row(cells ...string) {
	t.rows = append(t.rows, cells)
}

// String renders the table, each line ending in a newline.
func (t *Table) String() string {
	var b strings.Builder
	if t.headings == nil {
		b.WriteString("|" + strings.Repeat(" |", len(t.rules)) + "\n")
	} else {
		t.writeRow(&b, t.headings)
	}
	b.WriteString("|")
	for _, r := range t.rules {
		if t.padRule {
			b.WriteString(" " + r + " |")
		} else {
			b.WriteString(r + "|")
		}
	}
	b.WriteString("\n")
	for _, row := range t.rows {
		t.writeRow(&b, row)
	}
	return b.String()
}

// WriteTo writes the rendered table to w.
func (t *Table) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, t.String())
	return int64(n), err
}

func (t *Table) writeRow(b *strings.Builder, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + escapeCell(c) + " |")
	}
	for range len(t.rules) - len(cells) {
		b.WriteString(" |")
	}
	b.WriteString("\n")
}

// cellEscaper keeps a cell's text inside its cell: a "|" would end the
// cell, a line break the row.
var cellEscaper = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ")

func escapeCell(s string) string { return cellEscaper.Replace(s) }
