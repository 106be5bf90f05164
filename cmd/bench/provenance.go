package main

import (
	"os"
	"os/exec"
	"strings"
)

// notCommitted is what the site's footer adds to the commit it names when
// the results it renders are not the committed ones.
const notCommitted = ", with results not yet committed"

// provenance finds the repository the results are in (where the lessons
// and sources the site links live) and names, for the footer, the commit
// the results are at: the last commit that changed them, the site's own
// pages aside. It is not HEAD, so the same committed results rendered at
// any later commit name the same one, and a footer never names a commit
// the results were not changed in. Results that differ from their last
// commit (a fresh `make matrix` renders the site before anyone commits)
// are at no commit yet: the footer says so, and a site committed with them
// keeps saying it, wrongly, until it is rendered again from the committed
// results; TestCommittedSiteNamesItsResults holds the committed site to
// that.
func provenance(results string) (repo, commit string) {
	git := func(args ...string) (string, error) {
		b, err := exec.Command("git", append([]string{"-C", results}, args...)...).Output()
		return strings.TrimSpace(string(b)), err
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		wd, _ := os.Getwd()
		return wd, ""
	}
	// Relative to the results dir (git -C): "." is it, "site" the site's own pages.
	at, err := git("log", "-1", "--format=%h", "--abbrev=12", "--", ".", ":(exclude)site")
	if err != nil || at == "" {
		// Results never committed: name the commit they were made after.
		if at, err = git("rev-parse", "--short=12", "HEAD"); err != nil {
			return top, ""
		}
		return top, at + notCommitted
	}
	if dirty, err := git("status", "--porcelain", "--", ".", ":(exclude)site"); err == nil && dirty != "" {
		at += notCommitted
	}
	return top, at
}
