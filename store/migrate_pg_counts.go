package store

import "context"

// triggerKept are the tables whose rows PostgreSQL's triggers write as the
// rows they count are copied in (migrations_pg/0081_billing_counts.sql).
// The move copies them last, over what the triggers wrote, so the target
// holds the source's rows exactly (the verification compares row counts,
// and a count the appliance kept at 0 has a row the triggers never make).
var triggerKept = map[string]bool{"billing_counts": true}

// triggerKeptLast moves the trigger-kept tables after every other table.
func triggerKeptLast(tables []string) []string {
	var out, last []string
	for _, t := range tables {
		if triggerKept[t] {
			last = append(last, t)
		} else {
			out = append(out, t)
		}
	}
	return append(out, last...)
}

// clearTriggerKept empties a trigger-kept table before its copy.
func clearTriggerKept(ctx context.Context, tx *Tx, table string) error {
	if !triggerKept[table] {
		return nil
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM "`+table+`"`)
	return err
}
