// Package mysqllock holds the MySQL locks of the source documents, run on
// Debian's MariaDB server: the lock table with a unique index (insert to
// acquire, delete to release), the optimistic version column, a row lock
// held by an open transaction (SELECT ... FOR UPDATE), and MySQL's own
// named lock, GET_LOCK, bound to one server session.
package mysqllock
