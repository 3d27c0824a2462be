package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// maxCachedStmts bounds the statement cache. The store's statements are a fixed set except for a few
// built from filters and batch sizes; past the bound a statement simply runs unprepared.
const maxCachedStmts = 256

// stmtCache prepares each statement text once per pool and reuses it. database/sql does not cache
// statements, and without a cache modernc's SQLite parses and plans the SQL on every call: a third
// of the CPU of a burst of dispatches (BENCHMARKS.md). A *sql.Stmt of a pool is prepared again on
// each connection it meets, by database/sql itself.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

// get returns the prepared statement for query, preparing it on first use, or nil when it cannot
// be cached (the cache is full, or preparing failed: the caller then runs the query as it is and
// gets the error there).
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	if st := c.lookup(query); st != nil || c.full() {
		return st
	}
	return c.prepare(ctx, query)
}

// lookup returns the statement prepared for query, or nil.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[query]
}

func (c *stmtCache) full() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m) >= maxCachedStmts
}

// prepare prepares query on the pool and caches it; nil when preparing failed.
func (c *stmtCache) prepare(ctx context.Context, query string) *sql.Stmt {
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[query]; ok { // prepared concurrently: keep one
		_ = st.Close()
		return prev
	}
	c.m[query] = st
	return st
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, st := range c.m {
		errs = append(errs, st.Close())
		delete(c.m, q)
	}
	return errors.Join(errs...)
}

// reader is the read pool with cached statements; it satisfies queryer.
type reader struct {
	*sql.DB
	stmts *stmtCache
}

func newReader(db *sql.DB) reader { return reader{DB: db, stmts: newStmtCache(db)} }

func (r reader) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := r.stmts.get(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.DB.QueryContext(ctx, query, args...)
}

func (r reader) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := r.stmts.get(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.DB.QueryRowContext(ctx, query, args...)
}

// wtx is a write transaction that runs the statements the writer's cache holds prepared. The
// cache cannot prepare inside the transaction: preparing on the pool needs its only connection,
// which the transaction holds. So a statement the cache lacks runs unprepared and is noted, and
// writeTx prepares the noted ones once the transaction has ended, while it still holds the turn.
type wtx struct {
	*sql.Tx
	stmts  *stmtCache
	missed []string
}

// stmt returns the transaction's copy of the cached statement for query, or nil.
func (t *wtx) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := t.stmts.lookup(query); st != nil {
		return t.Tx.StmtContext(ctx, st)
	}
	if !t.stmts.full() {
		t.missed = append(t.missed, query)
	}
	return nil
}

func (t *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}
