package store

import (
	"context"
	"fmt"
)

// PingPostgres connects to databaseURL and changes nothing, so a start can
// fail on an unreachable or mistyped database before it creates anything
// (such as a vault key) in the data directory.
func PingPostgres(ctx context.Context, databaseURL string) error {
	db, err := openPGPool(databaseURL, true, "opsagent-ping")
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("cannot connect to the database (--database-url / OPSAGENT_DATABASE_URL): %w", err)
	}
	return nil
}
