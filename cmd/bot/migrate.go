package main

import (
	"context"
	"fmt"

	"go.uber.org/zap"
)

// migrate applies pending migrations and exits. Opening a store migrates it (under a lock on
// PostgreSQL, so running this next to live replicas is safe); serve does the same at start, so this
// is for deployments that migrate in a separate step before rolling out replicas.
func migrate(ctx context.Context, inv invocation, args []string) error {
	cfg, log, st, err := openLocal(ctx, inv, "migrate", args)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	if err := st.Close(); err != nil {
		return fmt.Errorf("close %s database: %w", cfg.Engine, err)
	}
	log.Info("db.migrate_completed", zap.String("database", cfg.redactedDatabase()))
	fmt.Fprintf(inv.stdout, "Migrations applied: %s\n", cfg.redactedDatabase())
	return nil
}
