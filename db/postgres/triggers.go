package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// The statements of triggers are rendered by package db (sqltriggers.go); these only run them.

func (d driver) Query(ctx context.Context, q string, args []any, each func(scan func(...any) error) error) error {
	rows, err := d.s.pool.Query(ctx, q, args...)
	if err != nil {
		return translate(err)
	}
	return translate(eachRow(rows, each))
}

func (d dtx) Query(ctx context.Context, q string, args []any, each func(scan func(...any) error) error) error {
	rows, err := d.tx.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	return eachRow(rows, each)
}

// eachRow calls each for every row, then closes rows.
func eachRow(rows pgx.Rows, each func(scan func(...any) error) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
