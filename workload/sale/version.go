package sale

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// The optimistic way 004_84007c392b46b35c.txt weighs and rejects: a version
// column on the stock row itself, each sale an UPDATE that matches only
// the version it read (UPDATE ... WHERE version = ?). It needs no lock and
// cannot oversell; the post's complaint is that under contention an update
// can keep failing and retry at length. MeasureVersion sells the stock that
// way and counts every retry, so the complaint is a figure.

const (
	createVersioned = `CREATE TABLE IF NOT EXISTS coupon_stock_versioned (id int PRIMARY KEY, remaining int NOT NULL, version bigint NOT NULL)`
	fillVersioned   = `INSERT INTO coupon_stock_versioned (id, remaining, version) VALUES (1, $1, 0) ON CONFLICT (id) DO UPDATE SET remaining = $1, version = 0`
	readVersioned   = `SELECT remaining, version FROM coupon_stock_versioned WHERE id = 1`
	sellVersioned   = `UPDATE coupon_stock_versioned SET remaining = $1, version = version + 1 WHERE id = 1 AND version = $2`
)

// VersionStatement is what one attempt of a versioned sale runs.
const VersionStatement = readVersioned + "; " + sellVersioned

// VersionTrial is one versioned sale from a full stock to sold out.
type VersionTrial struct {
	Trial
	// Retries counts the UPDATEs that matched no row (another seller had
	// moved the version since the read), each followed by a new read.
	Retries int `json:"retries"`
	// MostRetries is the most retries one sale took before it went
	// through (or found the stock sold out).
	MostRetries int `json:"most_retries_per_sale"`
}

// VersionResult is the versioned sale's trials.
type VersionResult struct {
	Clients int            `json:"clients"`
	Stock   int            `json:"stock"`
	Work    string         `json:"work"`
	Trials  []VersionTrial `json:"trials"`
}

// Oversold is the most any trial oversold.
func (r VersionResult) Oversold() int {
	m := 0
	for _, t := range r.Trials {
		m = max(m, t.Oversold)
	}
	return m
}

// MeasureVersion sells the stock opt.Trials times by version compare-and-set.
func MeasureVersion(ctx context.Context, opt Options) (VersionResult, error) {
	if opt.Clients <= 0 || opt.Stock <= 0 || opt.Trials <= 0 {
		return VersionResult{}, fmt.Errorf("sale: clients, stock and trials must be positive (got %d, %d, %d)", opt.Clients, opt.Stock, opt.Trials)
	}
	admin, err := pgx.Connect(ctx, opt.DSN)
	if err != nil {
		return VersionResult{}, fmt.Errorf("sale: connect: %w", err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, createVersioned); err != nil {
		return VersionResult{}, fmt.Errorf("sale: create the versioned stock: %w", err)
	}
	conns := make([]*pgx.Conn, opt.Clients)
	for i := range conns {
		c, err := pgx.Connect(ctx, opt.DSN)
		if err != nil {
			return VersionResult{}, fmt.Errorf("sale: seller %d: connect: %w", i, err)
		}
		defer c.Close(context.Background())
		conns[i] = c
	}
	res := VersionResult{Clients: opt.Clients, Stock: opt.Stock, Work: opt.Work.String()}
	for i := 0; i < opt.Trials; i++ {
		if _, err := admin.Exec(ctx, fillVersioned, opt.Stock); err != nil {
			return VersionResult{}, fmt.Errorf("sale: fill the versioned stock: %w", err)
		}
		t, err := versionTrial(ctx, conns, opt.Work)
		if err != nil {
			return VersionResult{}, fmt.Errorf("sale by version, trial %d: %w", i+1, err)
		}
		var version int64
		if err := admin.QueryRow(ctx, readVersioned).Scan(&t.Remaining, &version); err != nil {
			return VersionResult{}, fmt.Errorf("sale: read the versioned stock back: %w", err)
		}
		t.Oversold = max(0, t.Sold-opt.Stock)
		res.Trials = append(res.Trials, t)
	}
	return res, nil
}

func versionTrial(ctx context.Context, conns []*pgx.Conn, work time.Duration) (VersionTrial, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		out   VersionTrial
		first error
		start = make(chan struct{})
	)
	for _, c := range conns {
		wg.Add(1)
		go func(c *pgx.Conn) {
			defer wg.Done()
			<-start
			sold, retries, most, err := sellOutByVersion(ctx, c, work)
			mu.Lock()
			defer mu.Unlock()
			out.Sold += sold
			out.Retries += retries
			out.MostRetries = max(out.MostRetries, most)
			if err != nil && first == nil {
				first = err
			}
		}(c)
	}
	began := time.Now()
	close(start)
	wg.Wait()
	if first != nil {
		return VersionTrial{}, first
	}
	out.Seconds = time.Since(began).Seconds()
	out.Rate = float64(out.Sold) / out.Seconds
	return out, nil
}

// sellOutByVersion sells until the stock is gone: read the count and its
// version, check, write one less where the version is still the one read,
// and read again when it is not.
func sellOutByVersion(ctx context.Context, c *pgx.Conn, work time.Duration) (sold, retries, most int, err error) {
	this := 0 // retries of the sale in progress
	for {
		var left int
		var version int64
		if err := c.QueryRow(ctx, readVersioned).Scan(&left, &version); err != nil {
			return sold, retries, most, fmt.Errorf("read the versioned stock: %w", err)
		}
		if left <= 0 {
			return sold, retries, max(most, this), nil
		}
		if work > 0 {
			time.Sleep(work)
		}
		tag, err := c.Exec(ctx, sellVersioned, left-1, version)
		if err != nil {
			return sold, retries, most, fmt.Errorf("versioned update: %w", err)
		}
		if tag.RowsAffected() == 0 {
			retries++
			this++
			continue
		}
		sold++
		most = max(most, this)
		this = 0
	}
}
