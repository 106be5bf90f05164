// Package peers adapts third-party lock libraries to the Locker interface,
// without changing what the libraries do, so they can be measured and
// checked beside the lab's own locks.
package peers
