package store

// accountCacheShared reports whether BillingAccountTx may keep accounts in
// the DB's cache across transactions. That cache is exact on SQLite only,
// where write transactions run one at a time on one writer connection. On
// PostgreSQL write transactions run concurrently (one may read the old
// account after an update dropped it, and cache it after that update
// commits) and other servers update accounts this one never hears of: every
// transaction reads the row (its quota check then sees the plan in force).
//
// A version column would not make a cache pay there: validating an entry
// means reading the version inside the transaction, one round trip to the
// database, which is what reading the one account row by its key costs. A
// cache becomes worth it on PostgreSQL only with invalidation pushed across
// servers (LISTEN/NOTIFY on account updates), which the product does not
// have yet.
func (db *DB) accountCacheShared() bool { return !db.pg }
