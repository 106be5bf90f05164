package checker

// Two of the lessons' measurements are judged by counts, not by a
// history: a sale of a stock (the coupon sale of the source documents, on
// PostgreSQL), as Jepsen's counter workload is judged by its total, and a
// race of clients for a lock whose holder went away (the redis-getset
// takeover), by how many won. They run outside the engine, so they keep
// no history for porcupine; what each count must be to show exclusion is
// still the checker's to say.

// SoldExactly reports whether a sale of stock items sold each one once:
// the sellers were told of exactly stock sales and the stock reads zero
// after. More sales than the stock is an oversell, two sellers' reads of
// the same count both written back; fewer, or stock left, is a sale lost.
func SoldExactly(stock, sold, remaining int) bool {
	return sold == stock && remaining == 0
}

// OneWinner reports whether a race for a free lock granted it once: two
// winners hold it at once (unsafe), and none left it free while every
// racer asked.
func OneWinner(winners int) bool { return winners == 1 }

// RefreshMatchesKey reports whether a holder's own view of its lease
// agrees with the server's: its Refresh is refused exactly when the key no
// longer holds the expiry it was granted (overwritten by a racer that
// lost). A refusal with the key intact, or an accepted refresh of a key
// another client rewrote, is a lock that misreports what it holds.
func RefreshMatchesKey(overwritten, refreshRefused bool) bool {
	return overwritten == refreshRefused
}
