package site

import (
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// The site's files: the front page, a page per lock, a page per cell.
const indexPage = "index.html"

// lockPage is a lock's page; a benchmark row of another topology ("lock @
// topology", record.Bench.Append) is the lock's own page.
func lockPage(impl string) string { return "locks/" + record.ImplOf(impl) + ".html" }

// cellPage names a cell's page by its lock, scenario and fencing, the
// three things that make a cell.
func cellPage(c record.Cell) string {
	name := c.Impl + "--" + c.Scenario
	if t := topology.Or(c.Topology); t != topology.SingleName {
		name = c.Impl + "--" + t + "--" + c.Scenario
	}
	if c.Fencing {
		name += "--fenced"
	}
	if c.Profile != "" {
		// A cell under another profile than fast has a page of its own;
		// a fast cell keeps the path it always had.
		name += "--" + c.Profile
	}
	return "cells/" + name + ".html"
}

// cellName is a cell as the matrix's report names it.
func cellName(c record.Cell) string {
	name := c.Row() + " / " + c.Scenario
	if c.Fencing {
		name += " / fenced"
	}
	if c.Profile != "" {
		name += " / " + c.Profile
	}
	return name
}

// page is what every page shares: its place in the site, its title, and
// the links of the header and footer.
type page struct {
	Path   string // in the site, slash-separated
	Title  string
	Home   string // href of the front page
	Footer footer
}

type footer struct {
	Commit  string
	Command string
}
