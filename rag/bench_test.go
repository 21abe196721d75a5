//go:build unix

package rag

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const benchDocs = 10_000

// heapPeak samples HeapInuse until stopped and returns the highest value seen, in bytes.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		sample()
		return peak.Load()
	}
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIndex10k indexes 10,000 documents of about 2 KB copied into an empty data directory: the work of
// Open on a new install, or of a rebuild after the index was lost. Run with -benchtime 1x: each iteration
// indexes the whole corpus.
func BenchmarkIndex10k(b *testing.B) {
	docs := genCorpus(benchDocs)
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		bytes := writeCorpus(b, dir, docs)
		runtime.GC()
		stop := heapPeak()
		b.StartTimer()
		start, cpuStart := time.Now(), cpuTime()
		s, err := Open(context.Background(), dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		elapsed, cpu := time.Since(start), cpuTime()-cpuStart
		b.StopTimer()
		peak := stop()
		st := s.Stats(Scope{})
		if st.Documents != benchDocs {
			b.Fatalf("indexed %d documents, want %d", st.Documents, benchDocs)
		}
		b.ReportMetric(float64(benchDocs)/elapsed.Seconds(), "docs/s")
		// Per CPU-second: the figure that does not move with other load on the machine.
		b.ReportMetric(float64(benchDocs)/cpu.Seconds(), "docs/cpu_s")
		b.ReportMetric(float64(bytes)/benchDocs, "bytes/doc")
		b.ReportMetric(float64(st.Chunks), "chunks")
		b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MB")
		b.ReportMetric(float64(st.IndexBytes)/(1<<20), "index_MB")
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkSearch10k measures Search over the 10,000 documents, one tenant's project at a time (about 170
// documents of its own plus its org-wide ones among the 10,000 in the shared index). One iteration is one
// query; run with -benchtime 2000x for stable percentiles.
func BenchmarkSearch10k(b *testing.B) {
	docs := genCorpus(benchDocs)
	dir := b.TempDir()
	writeCorpus(b, dir, docs)
	s, err := Open(context.Background(), dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if os.Getenv("RAG_BENCH_SETTLE") != "" {
		time.Sleep(15 * time.Second)
	}
	ctx := context.Background()
	var lat []time.Duration
	hits := 0
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d := docs[(i*7919)%len(docs)]
		q := Query{Text: corpusQueries[i%len(corpusQueries)], Limit: 10}
		start := time.Now()
		res, err := s.Search(ctx, d.scope, q)
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		hits += len(res)
		i++
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(percentile(lat, 50)), "p50_ms")
	b.ReportMetric(ms(percentile(lat, 99)), "p99_ms")
	b.ReportMetric(float64(hits)/float64(len(lat)), "hits/query")
}

// BenchmarkPut is one acknowledged write: file fsynced, directory fsynced, chunks indexed.
func BenchmarkPut(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	docs := genCorpus(100)
	i := 0
	for b.Loop() {
		d := docs[i%len(docs)]
		if _, err := s.Put(context.Background(), d.scope, d.collection, fmt.Sprintf("put/%d.md", i), []byte(d.content), nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
