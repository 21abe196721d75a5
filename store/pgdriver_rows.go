package store

import (
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// A query's rows, converted from PostgreSQL's text form to the values
// database/sql scans from (see pgdriver.go).

type pgRows struct {
	rr        *pgconn.ResultReader
	mrr       *pgconn.MultiResultReader // set when the query went behind pipelined statements
	sd        *pgconn.StatementDescription
	rest      []*pgconn.StatementDescription // the pipelined queries whose rows follow (pgdriver_multiquery.go)
	preloaded bool
	done      bool
	cols      []string
}

func (r *pgRows) Columns() []string {
	if r.cols == nil {
		r.cols = make([]string, len(r.sd.Fields))
		for i, f := range r.sd.Fields {
			r.cols[i] = f.Name
		}
	}
	return r.cols
}

func (r *pgRows) Close() error {
	var err error
	if !r.done {
		r.done = true
		_, err = r.rr.Close()
	}
	return r.closeBatch(err)
}

// closeBatch reads a pipelined query's batch to its end.
func (r *pgRows) closeBatch(err error) error {
	if r.mrr != nil {
		if cerr := r.mrr.Close(); err == nil {
			err = cerr
		}
		r.mrr = nil
	}
	return err
}

func (r *pgRows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	if r.preloaded {
		r.preloaded = false
	} else if !r.rr.NextRow() {
		r.done = true
		_, err := r.rr.Close()
		if err != nil || !r.HasNextResultSet() {
			err = r.closeBatch(err)
		}
		if err != nil {
			return withStatement(err, r.sd.SQL)
		}
		return io.EOF
	}
	for i, raw := range r.rr.Values() {
		v, err := pgValue(r.sd.Fields[i].DataTypeOID, raw)
		if err != nil {
			return fmt.Errorf("postgres: column %s: %w", r.sd.Fields[i].Name, err)
		}
		dest[i] = v
	}
	return nil
}

// pgValue converts a result's text form (copied: raw is reused for the next row).
func pgValue(oid uint32, raw []byte) (driver.Value, error) {
	if raw == nil {
		return nil, nil
	}
	switch oid {
	case oidInt8, oidInt4, oidInt2:
		return strconv.ParseInt(string(raw), 10, 64)
	case oidFloat8, oidFloat4:
		return strconv.ParseFloat(string(raw), 64)
	case oidBool:
		return len(raw) == 1 && raw[0] == 't', nil
	case oidBytea:
		if len(raw) >= 2 && raw[0] == '\\' && raw[1] == 'x' {
			out := make([]byte, hex.DecodedLen(len(raw)-2))
			_, err := hex.Decode(out, raw[2:])
			return out, err
		}
		return nil, errors.New("bytea not in hex form")
	case oidNumeric:
		// SUM over bigint is numeric; a whole one scans as an integer.
		return strings.TrimSuffix(string(raw), ".0"), nil
	}
	return string(raw), nil
}
