//go:build unix

package knowledge_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server/knowledge"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/store/storetest"
)

// cpuTime is this process's user and system CPU time (PostgreSQL's own work is not in it).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var words = strings.Fields(`postgres redis kafka nginx gateway billing auth search etcd kubelet ingress prometheus
	grafana vault rabbitmq elasticsearch latency disk memory certificate replication pool crashloop restart scale
	drain inspect rollback rotate flush promote cordon primary replica consumer node balancer cache deployment volume`)

// doc is a Markdown runbook of about 2 KB: a title and four sections.
func doc(r *rand.Rand, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\ntags: [ops]\n---\n# Runbook %d: %s %s\n\n", i, words[r.IntN(len(words))], words[r.IntN(len(words))])
	for _, h := range []string{"Symptoms", "Diagnosis", "Mitigation", "Escalation"} {
		fmt.Fprintf(&b, "## %s\n\n", h)
		for range 60 {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

// seed makes orgs organizations and n documents spread over them, in batches of 500 per transaction.
func seed(tb testing.TB, db *store.DB, orgs, n int) []string {
	ctx := context.Background()
	var ids []string
	for i := range orgs {
		u := &store.User{Email: fmt.Sprintf("u%d@example.com", i), Name: fmt.Sprintf("user%d", i)}
		if _, err := db.Register(ctx, u, &store.NewLogin{ID: store.NewID(), Salt: []byte("s"), RefreshHash: []byte(fmt.Sprint(i)), Kind: "web", TTL: time.Hour}); err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, u.CurrentOrgID)
	}
	r := rand.New(rand.NewPCG(42, 2026))
	for start := 0; start < n; start += 500 {
		err := db.Write(ctx, func(tx *store.Tx) error {
			tctx := store.WithTx(ctx, tx)
			for i := start; i < min(start+500, n); i++ {
				c := []byte(doc(r, i))
				d := &store.KnowledgeDoc{OrgID: ids[i%orgs], Collection: rag.CollectionRunbooks, Name: fmt.Sprintf("r%05d.md", i),
					Content: c, Size: int64(len(c)), SHA256: fmt.Sprint(i), Title: fmt.Sprintf("Runbook %d", i), Tags: []string{"ops"}}
				if err := db.PutKnowledgeDoc(tctx, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return ids
}

// BenchmarkRebuild10k: a server starting on a PostgreSQL database holding 10,000 documents of about 2 KB.
// "cold" is a new server (empty data directory): every document read from the feed and indexed; "warm" is
// a restart on the index it left: the whole feed is read again, nothing re-indexed. Run with -benchtime 1x.
func BenchmarkRebuild10k(b *testing.B) {
	const n = 10_000
	db, err := store.OpenPostgres(context.Background(), storetest.DatabaseURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	orgs := seed(b, db, 10, n)
	// The appliance's figure in the same run: the same documents as files, indexed by a cold Open.
	files := b.TempDir()
	appliance, err := rag.Open(context.Background(), files, rag.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(42, 2026))
	for i := range n {
		if err := os.MkdirAll(filepath.Join(files, "docs", orgs[i%10], "_org", "runbooks"), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(files, "docs", orgs[i%10], "_org", "runbooks", fmt.Sprintf("r%05d.md", i)), []byte(doc(r, i)), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	appliance.Close()
	for b.Loop() {
		dir := b.TempDir()
		os.RemoveAll(filepath.Join(files, "index"))
		start, cpu := time.Now(), cpuTime()
		s, err := rag.Open(context.Background(), files, rag.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "files_s")
		b.ReportMetric((cpuTime() - cpu).Seconds(), "files_cpu_s")
		if st := s.Stats(rag.Scope{}); st.Documents != n {
			b.Fatalf("files: %d documents indexed", st.Documents)
		}
		s.Close()
		for _, phase := range []string{"cold", "warm"} {
			start, cpu := time.Now(), cpuTime()
			s, err := rag.Open(context.Background(), dir, knowledge.Options(db, rag.Options{}))
			if err != nil {
				b.Fatal(err)
			}
			wall, used := time.Since(start), cpuTime()-cpu
			if st := s.Stats(rag.Scope{}); st.Documents != n {
				b.Fatalf("%s: %d documents indexed", phase, st.Documents)
			}
			s.Close()
			b.ReportMetric(wall.Seconds(), phase+"_s")
			b.ReportMetric(used.Seconds(), phase+"_cpu_s")
		}
	}
}

// BenchmarkFeedLag: two servers' stores on one PostgreSQL database; one writes a document, the other's
// follower (default interval) makes it searchable. One iteration is one document; lag percentiles reported.
func BenchmarkFeedLag(b *testing.B) {
	db, err := store.OpenPostgres(context.Background(), storetest.DatabaseURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	orgs := seed(b, db, 1, 0)
	ctx := context.Background()
	open := func() *rag.Store {
		s, err := rag.Open(ctx, b.TempDir(), knowledge.Options(db, rag.Options{}))
		if err != nil {
			b.Fatal(err)
		}
		s.Start(ctx)
		return s
	}
	writer, reader := open(), open()
	defer writer.Close()
	defer reader.Close()
	scope := rag.Scope{OrgID: orgs[0]}
	var lags, puts []time.Duration
	i := 0
	for b.Loop() {
		// Writes arrive at any moment of the follower's interval, not just after its tick.
		b.StopTimer()
		time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
		b.StartTimer()
		word := fmt.Sprintf("marker%dzz", i)
		start := time.Now()
		if _, err := writer.Put(ctx, scope, rag.CollectionFacts, fmt.Sprintf("f%d.md", i), []byte("# Fact\n\nThe "+word+" holds.\n"), nil); err != nil {
			b.Fatal(err)
		}
		puts = append(puts, time.Since(start))
		for {
			hits, err := reader.Search(ctx, scope, rag.Query{Text: word})
			if err != nil {
				b.Fatal(err)
			}
			if len(hits) > 0 {
				break
			}
			if time.Since(start) > 30*time.Second {
				b.Fatal("not found within 30 s")
			}
			time.Sleep(5 * time.Millisecond)
		}
		lags = append(lags, time.Since(start))
		i++
	}
	slices.Sort(lags)
	slices.Sort(puts)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	at := func(s []time.Duration, p int) time.Duration { return s[min(len(s)-1, len(s)*p/100)] }
	b.ReportMetric(ms(at(lags, 50)), "lag_p50_ms")
	b.ReportMetric(ms(at(lags, 95)), "lag_p95_ms")
	b.ReportMetric(ms(lags[len(lags)-1]), "lag_max_ms")
	b.ReportMetric(ms(at(puts, 50)), "put_p50_ms")
}

// BenchmarkIdleFollow is one read of the feed when nothing changed: what every server pays every 500 ms
// (FollowInterval) on a quiet cluster. Since the feed can be pruned, each read also asks how far it was.
func BenchmarkIdleFollow(b *testing.B) {
	db, err := store.OpenPostgres(context.Background(), storetest.DatabaseURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	seed(b, db, 2, 100)
	s, err := rag.Open(context.Background(), b.TempDir(), knowledge.Options(db, rag.Options{}))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	for range b.N {
		if err := s.Sync(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu_us/poll")
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "wall_us/poll")
}
