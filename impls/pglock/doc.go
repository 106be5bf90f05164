// Package pglock holds the PostgreSQL locks: an optimistic version column,
// a unique-row insert, and a session advisory lock.
package pglock
