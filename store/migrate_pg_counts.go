package store

// triggerKept are the tables whose rows PostgreSQL's triggers write as the
// rows they count are copied in (migrations_pg/0081_billing_counts.sql).
// The move copies them last (copyTable first deletes what the target holds),
// so the triggers fired by the rows copied after them cannot add to the
// source's counts.
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
