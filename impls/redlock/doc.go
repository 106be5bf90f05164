// Package redlock is antirez's Redlock over N independent Redis nodes.
package redlock
