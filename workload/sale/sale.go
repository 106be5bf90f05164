// Package sale is the coupon sale of the source documents run on a real
// PostgreSQL stock, three ways: one conditional UPDATE per sale (no lock),
// a pg-advisory lock around a SELECT and an UPDATE (the lock the author
// would reach for, on the same database), and the SELECT and UPDATE with
// no lock at all (the bug the lock was for). Every sale a client is told
// succeeded is counted, and the stock row is read back after each trial,
// so an oversell is measured, not assumed.
package sale

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/pglock"
	"github.com/locklab/locklab/topology"
)

// Way is how one sale is made.
type Way string

const (
	// Conditional is one statement per sale, which the database runs
	// atomically: it decrements only while stock is left.
	Conditional Way = "conditional-update"
	// Advisory takes pg-advisory on the stock, reads it, writes one less,
	// and releases: the read-check-write the lock makes exclusive.
	Advisory Way = "pg-advisory"
	// NoLock is the same read-check-write with nothing around it.
	NoLock Way = "no-lock"
)

// Ways lists every way in the order a page shows them.
var Ways = []Way{Conditional, Advisory, NoLock}

// Control reports whether the way is the control: the read-check-write
// with no lock, which is there to show that an oversell is seen, so its
// trials are not held to selling the stock exactly.
func (w Way) Control() bool { return w == NoLock }

// Statement is what one sale runs, for a page to quote.
func (w Way) Statement() string {
	switch w {
	case Conditional:
		return sellConditional
	case Advisory:
		return "pg_advisory_lock; " + readStock + "; " + writeStock + "; pg_advisory_unlock"
	case NoLock:
		return readStock + "; " + writeStock
	}
	return ""
}

const (
	createStock     = `CREATE TABLE IF NOT EXISTS coupon_stock (id int PRIMARY KEY, remaining int NOT NULL)`
	fillStock       = `INSERT INTO coupon_stock (id, remaining) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET remaining = $1`
	sellConditional = `UPDATE coupon_stock SET remaining = remaining - 1 WHERE id = 1 AND remaining > 0`
	readStock       = `SELECT remaining FROM coupon_stock WHERE id = 1`
	writeStock      = `UPDATE coupon_stock SET remaining = $1 WHERE id = 1`
	// lockKey is the advisory lock's key: one lock for the one stock row.
	lockKey = "coupon-stock"
)

// Options configure a measurement.
type Options struct {
	DSN     string // the PostgreSQL the lab started
	Clients int    // concurrent sellers, each with its own connection
	Stock   int    // coupons on sale in each trial
	Trials  int
	// Work is slept between the read and the write of the read-check-write
	// ways (a seller doing something with the count). Zero for a speed
	// comparison; a test widens the no-lock window with it.
	Work time.Duration
}

// Trial is one sale from a full stock to sold out.
type Trial struct {
	Sold      int     `json:"sold"`      // sales the clients were told succeeded
	Remaining int     `json:"remaining"` // the stock row after the sale
	Oversold  int     `json:"oversold"`  // sold beyond the stock
	Seconds   float64 `json:"seconds"`   // first sale started to last client done
	Rate      float64 `json:"sales_per_s"`
}

// Result is one way's trials.
type Result struct {
	Way     Way     `json:"way"`
	Clients int     `json:"clients"`
	Stock   int     `json:"stock"`
	Work    string  `json:"work"`
	Trials  []Trial `json:"trials"`
}

// Oversold is the most any trial oversold.
func (r Result) Oversold() int {
	m := 0
	for _, t := range r.Trials {
		m = max(m, t.Oversold)
	}
	return m
}

// Rates returns the trials' sales per second, sorted.
func (r Result) Rates() []float64 {
	var out []float64
	for _, t := range r.Trials {
		out = append(out, t.Rate)
	}
	sort.Float64s(out)
	return out
}

// Measure runs the sale opt.Trials times the given way.
func Measure(ctx context.Context, opt Options, way Way) (Result, error) {
	if opt.Clients <= 0 || opt.Stock <= 0 || opt.Trials <= 0 {
		return Result{}, fmt.Errorf("sale: clients, stock and trials must be positive (got %d, %d, %d)", opt.Clients, opt.Stock, opt.Trials)
	}
	admin, err := pgx.Connect(ctx, opt.DSN)
	if err != nil {
		return Result{}, fmt.Errorf("sale: connect: %w", err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, createStock); err != nil {
		return Result{}, fmt.Errorf("sale: create the stock table: %w", err)
	}
	sellers := make([]*seller, opt.Clients)
	for i := range sellers {
		s, err := newSeller(ctx, opt, way, i)
		if err != nil {
			return Result{}, err
		}
		defer s.close()
		sellers[i] = s
	}
	res := Result{Way: way, Clients: opt.Clients, Stock: opt.Stock, Work: opt.Work.String()}
	for i := 0; i < opt.Trials; i++ {
		if _, err := admin.Exec(ctx, fillStock, opt.Stock); err != nil {
			return Result{}, fmt.Errorf("sale: fill the stock: %w", err)
		}
		t, err := trial(ctx, sellers)
		if err != nil {
			return Result{}, fmt.Errorf("sale %s, trial %d: %w", way, i+1, err)
		}
		if err := admin.QueryRow(ctx, readStock).Scan(&t.Remaining); err != nil {
			return Result{}, fmt.Errorf("sale: read the stock back: %w", err)
		}
		t.Oversold = max(0, t.Sold-opt.Stock)
		res.Trials = append(res.Trials, t)
	}
	return res, nil
}

// trial lets every seller sell until it finds the stock sold out.
func trial(ctx context.Context, sellers []*seller) (Trial, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		sold  int
		errs  []error
		start = make(chan struct{})
	)
	for _, s := range sellers {
		wg.Add(1)
		go func(s *seller) {
			defer wg.Done()
			<-start
			n, err := s.sellOut(ctx)
			mu.Lock()
			sold += n
			if err != nil {
				errs = append(errs, err)
			}
			mu.Unlock()
		}(s)
	}
	began := time.Now()
	close(start)
	wg.Wait()
	secs := time.Since(began).Seconds()
	if err := errors.Join(errs...); err != nil {
		return Trial{}, err
	}
	return Trial{Sold: sold, Seconds: secs, Rate: float64(sold) / secs}, nil
}

// seller is one client: its own connection to the stock and, for the
// advisory way, its own lock client (whose lease holds a connection of its
// own, as pg-advisory requires).
type seller struct {
	way  Way
	work time.Duration
	conn *pgx.Conn
	lock impls.Locker
}

func newSeller(ctx context.Context, opt Options, way Way, id int) (*seller, error) {
	conn, err := pgx.Connect(ctx, opt.DSN)
	if err != nil {
		return nil, fmt.Errorf("sale: seller %d: connect: %w", id, err)
	}
	s := &seller{way: way, work: opt.Work, conn: conn}
	if way == Advisory {
		// The lock declares the kind of server it reaches (impls.Backend);
		// the sale only knows the lock's name and the DSN.
		spec, err := impls.Lookup(string(Advisory))
		if err != nil {
			conn.Close(context.Background())
			return nil, fmt.Errorf("sale: seller %d: %w", id, err)
		}
		l, err := pglock.NewAdvisory(ctx, impls.Config{Servers: topology.At(spec.Backend.Kind, opt.DSN), ClientID: fmt.Sprintf("seller-%d", id)})
		if err != nil {
			conn.Close(context.Background())
			return nil, fmt.Errorf("sale: seller %d: %w", id, err)
		}
		s.lock = l
	}
	return s, nil
}

func (s *seller) close() {
	s.conn.Close(context.Background())
	if s.lock != nil {
		s.lock.Close()
	}
}

// sellOut sells until the stock is gone and returns how many sales it was
// told succeeded.
func (s *seller) sellOut(ctx context.Context) (int, error) {
	sold := 0
	for {
		ok, err := s.sell(ctx)
		if err != nil || !ok {
			return sold, err
		}
		sold++
	}
}

// sell makes one sale; false means sold out.
func (s *seller) sell(ctx context.Context) (bool, error) {
	switch s.way {
	case Conditional:
		tag, err := s.conn.Exec(ctx, sellConditional)
		if err != nil {
			return false, fmt.Errorf("conditional update: %w", err)
		}
		return tag.RowsAffected() == 1, nil
	case Advisory:
		lease, err := s.lock.Acquire(ctx, lockKey)
		if err != nil {
			return false, fmt.Errorf("acquire: %w", err)
		}
		ok, err := s.readCheckWrite(ctx)
		if rerr := lease.Release(ctx); rerr != nil && err == nil {
			err = fmt.Errorf("release: %w", rerr)
		}
		return ok, err
	case NoLock:
		return s.readCheckWrite(ctx)
	}
	return false, fmt.Errorf("unknown way %q", s.way)
}

// readCheckWrite is the coupon claim of the source documents: read the
// count, check it is above zero, write back one less.
func (s *seller) readCheckWrite(ctx context.Context) (bool, error) {
	var left int
	if err := s.conn.QueryRow(ctx, readStock).Scan(&left); err != nil {
		return false, fmt.Errorf("read the stock: %w", err)
	}
	if left <= 0 {
		return false, nil
	}
	if s.work > 0 {
		time.Sleep(s.work)
	}
	if _, err := s.conn.Exec(ctx, writeStock, left-1); err != nil {
		return false, fmt.Errorf("write the stock: %w", err)
	}
	return true, nil
}
