package sqlite

import (
	"context"
	"database/sql"
)

// The statements of triggers are rendered by package db (sqltriggers.go); these only run them.

func (d driver) Query(ctx context.Context, q string, args []any, each func(scan func(...any) error) error) error {
	rows, err := d.s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return translate(err)
	}
	return translate(eachRow(rows, each))
}

func (d dtx) Query(ctx context.Context, q string, args []any, each func(scan func(...any) error) error) error {
	rows, err := d.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	return eachRow(rows, each)
}

// eachRow calls each for every row, then closes rows.
func eachRow(rows *sql.Rows, each func(scan func(...any) error) error) error {
	defer func() { _ = rows.Close() }() // the error that matters is rows.Err
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
