package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// stateCollector reads, at scrape time, what is cheaper to measure than to
// track: file sizes, rows waiting for people, and the readiness checks (so
// an alert can name the failing part). A scrape costs two stats, one
// indexed count and at most one readiness run (cached for a second).
type stateCollector struct{ s *Server }

var (
	descDBSize    = prometheus.NewDesc("opsagent_db_size_bytes", "Size of the database: the SQLite file, or the PostgreSQL database (pg_database_size).", nil, nil)
	descWALSize   = prometheus.NewDesc("opsagent_db_wal_size_bytes", "Size of the SQLite write-ahead log.", nil, nil)
	descApprovals = prometheus.NewDesc("opsagent_approvals_pending", "Approvals waiting for a decision (all orgs).", nil, nil)
	descReady     = prometheus.NewDesc("opsagent_ready", "1 when the readiness check passes, by check (database, disk, rag_index, scheduler, vault).", []string{"check"}, nil)
	descDiskFree  = prometheus.NewDesc("opsagent_data_dir_free_bytes", "Free space an unprivileged writer has in the data directory.", nil, nil)
	descConnected = prometheus.NewDesc("opsagent_connectors_connected", "Connectors holding a live connection to this server.", nil, nil)
)

// SetConnectorCounter lets the connector feature report how many
// connectors are connected; /metrics exports opsagent_connectors_connected
// once it is set (and not before: no feature, no series).
func (s *Server) SetConnectorCounter(count func() int) { s.connectorCount.Store(&count) }

func (stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDBSize, descWALSize, descApprovals, descReady, descDiskFree, descConnected} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	main, wal := s.db.FileSizes(ctx)
	ch <- prometheus.MustNewConstMetric(descDBSize, prometheus.GaugeValue, float64(main))
	ch <- prometheus.MustNewConstMetric(descWALSize, prometheus.GaugeValue, float64(wal))
	if free, err := DiskFree(s.cfg.DataDir); err == nil {
		ch <- prometheus.MustNewConstMetric(descDiskFree, prometheus.GaugeValue, float64(free))
	}
	if count := s.connectorCount.Load(); count != nil {
		ch <- prometheus.MustNewConstMetric(descConnected, prometheus.GaugeValue, float64((*count)()))
	}
	if n, err := s.db.CountPendingApprovals(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(descApprovals, prometheus.GaugeValue, float64(n))
	} else {
		ch <- prometheus.NewInvalidMetric(descApprovals, err)
	}
	for _, chk := range s.readyz(ctx).Checks {
		v := 0.0
		if chk.OK {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, v, chk.Name)
	}
}
