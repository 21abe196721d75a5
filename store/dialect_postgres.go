package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

// The store's SQL is written once, in SQLite's dialect with ? placeholders.
// On PostgreSQL the database/sql driver (pgdriver.go) rewrites each
// statement once (cached by its text) into PostgreSQL's dialect: the few
// constructs that differ are listed here, in one place, instead of engine
// branches across the store's methods.

// pgRewrites are the statement fragments whose PostgreSQL spelling differs.
// Each is a regular expression over SQLite's spelling and its replacement.
var pgRewrites = []struct {
	re   *regexp.Regexp
	with string
}{
	// SQLite's LIKE ignores ASCII case; PostgreSQL's ILIKE is the same question.
	{regexp.MustCompile(`\bLIKE\b`), `ILIKE`},
	// Case-insensitive ordering.
	{regexp.MustCompile(`(\w+) COLLATE NOCASE`), `lower($1)`},
	// JSON members read and set by path: the store only ever uses one-level paths.
	{regexp.MustCompile(`json_extract\((\w+), '\$\.(\w+)'\)`), `($1::jsonb ->> '$2')`},
	{regexp.MustCompile(`json_set\((\w+), '\$\.(\w+)', \?\)`), `(jsonb_set($1::jsonb, '{$2}', to_jsonb(CAST(? AS TEXT))))::text`},
	// Flags are 0/1 integers on both engines; PostgreSQL's AND wants booleans.
	{regexp.MustCompile(`SELECT (\w+\.enabled) AND (\w+\.enabled),`), `SELECT ($1 <> 0 AND $2 <> 0),`},
	// A substring of a stored hash (tests prove a secret is not kept in clear).
	{regexp.MustCompile(`instr\((\w+_hash), \?\)`), `position(convert_to(CAST(? AS TEXT), 'UTF8') in $1)`},
	// SQLite's index hint (a query whose plan must not depend on statistics);
	// PostgreSQL's planner has its own and no such syntax.
	{regexp.MustCompile(` INDEXED BY \w+`), ``},
	// The physical row address, used to delete in bounded batches.
	{regexp.MustCompile(`\browid\b`), `ctid`},
}

var insertOrIgnore = regexp.MustCompile(`(?i)^(\s*)INSERT OR IGNORE INTO`)

// pgRewriteCache maps a statement's SQLite text to its PostgreSQL text.
var pgRewriteCache sync.Map

// pgSQL returns query in PostgreSQL's dialect.
func pgSQL(query string) string {
	if v, ok := pgRewriteCache.Load(query); ok {
		return v.(string)
	}
	q := query
	if insertOrIgnore.MatchString(q) {
		q = insertOrIgnore.ReplaceAllString(q, "${1}INSERT INTO")
		if i := strings.LastIndex(strings.ToUpper(q), " RETURNING "); i >= 0 {
			q = q[:i] + " ON CONFLICT DO NOTHING" + q[i:]
		} else {
			q = strings.TrimRight(q, " \t\n;") + " ON CONFLICT DO NOTHING"
		}
	}
	for _, r := range pgRewrites {
		q = r.re.ReplaceAllString(q, r.with)
	}
	q = rebind(q)
	pgRewriteCache.Store(query, q)
	return q
}

// rebind numbers ? placeholders as $1, $2, ... (and turns ?N into $N)
// outside string literals, quoted identifiers and comments.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) {
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c { // doubled quote inside the literal
						j += 2
						continue
					}
					break
				}
				j++
			}
			b.WriteString(q[i:min(j+1, len(q))])
			i = j
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			j := strings.Index(q[i+2:], "*/")
			end := len(q)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(q[i:end])
			i = end - 1
		case c == '?' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			// ?NNN, SQLite's numbered parameter, is PostgreSQL's $NNN.
			b.WriteByte('$')
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// openPGPool opens one database/sql pool on the cluster (pgdriver.go);
// readOnly makes every transaction of its sessions read-only, as the SQLite
// reader pool's query_only.
func openPGPool(databaseURL string, readOnly bool, appName string) (*sql.DB, error) {
	cfg, err := pgconn.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = appName
	}
	return sql.OpenDB(pgDriverConnector{cfg: cfg}), nil
}

// withStatement names the statement in a syntax or type error (class 42):
// those are a dialect difference the rewrite missed, found from the log.
// The statement text holds placeholders, never values.
func withStatement(err error, q string) error {
	if c := pgError(err); strings.HasPrefix(c, "42") {
		return fmt.Errorf("%w (statement: %s)", err, strings.Join(strings.Fields(q), " "))
	}
	return err
}

// pgError returns err's PostgreSQL error code, or "".
func pgError(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// pgRetryable: the transaction lost a serialization race or a deadlock
// against another transaction (usually another node); running it again is
// what SQLite's busy retry does.
// driver.ErrBadConn comes only from a connection that broke before the
// statement was sent (pgconn.SafeToRetry): with BEGIN queued into the first
// statement, that is a transaction that never started, and any statements of
// it already executed were discarded with the session, so running it again
// on another connection is safe. (A COMMIT whose fate is unknown is not
// SafeToRetry and is never retried.)
func pgRetryable(err error) bool {
	c := pgError(err)
	return c == "40001" || c == "40P01" || errors.Is(err, driver.ErrBadConn)
}

// pgUnique: unique_violation (primary keys included).
func pgUnique(err error) bool { return pgError(err) == "23505" }
