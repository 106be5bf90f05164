// Package docs holds the lab's reference pages: README.md links each of
// them, one concern a page, and docs/lessons and docs/guests teach. It has
// no code; its test holds every relative link of README.md and of every
// page under docs/ to a file (and a heading or anchor) that exists, so a
// page moved or renamed cannot leave a reader at a dead link.
package docs
