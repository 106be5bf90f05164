// Package zklock is the standard ZooKeeper lock recipe: ephemeral
// sequential children, the lowest holds, each waiter watches its predecessor.
package zklock
