package rag

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The benchmark corpus: runbook-, incident- and fact-like Markdown generated from a fixed seed, so every
// run indexes the same bytes.
var (
	corpusServices = []string{"postgres", "redis", "kafka", "nginx", "api-gateway", "billing", "auth", "search",
		"etcd", "kubelet", "ingress", "prometheus", "grafana", "vault", "rabbitmq", "elasticsearch", "cdn", "dns",
		"payments", "scheduler", "object-storage", "mysql", "memcached", "cert-manager"}
	corpusProblems = []string{"high latency", "disk full", "memory leak", "certificate expiry", "replication lag",
		"connection pool exhausted", "CrashLoopBackOff", "OOMKilled", "5xx spike", "split brain",
		"slow queries", "queue backlog", "failed deploy", "node not ready", "DNS resolution failures"}
	corpusVerbs   = []string{"check", "restart", "scale", "drain", "inspect", "roll back", "rotate", "flush", "promote", "cordon"}
	corpusObjects = []string{"the primary", "the replica", "the consumer group", "the pod", "the node", "the load balancer",
		"the TLS certificate", "the connection pool", "the cache", "the deployment", "the volume", "the index"}
	corpusCommands = []string{"kubectl get pods -n %s", "kubectl logs deploy/%s --since=15m", "systemctl status %s",
		"journalctl -u %s -n 200", "df -h /var/lib/%s", "kubectl rollout undo deploy/%s", "curl -s localhost:9090/metrics | grep %s"}
	corpusWhy = []string{"because the alert fired twice in ten minutes", "so that traffic shifts to healthy instances",
		"before paging the secondary on-call", "to confirm the dashboard matches reality",
		"since the last deploy changed the configuration", "while watching the error budget burn rate"}
	corpusQueries = []string{"postgres replication lag", "redis memory leak", "restart kafka consumer group",
		"certificate expiry nginx", "disk full elasticsearch", "rollback failed deploy", "node not ready drain",
		"dns resolution failures", "vault unseal", "api-gateway 5xx spike", "connection pool exhausted mysql",
		"OOMKilled pod", "scale the deployment", "queue backlog rabbitmq", "prometheus high latency"}
)

type corpusDoc struct {
	scope      Scope
	collection string
	name       string
	content    string
}

func sentence(r *rand.Rand, svc string) string {
	return fmt.Sprintf("%s %s on %s %s.", strings.ToUpper(corpusVerbs[r.IntN(len(corpusVerbs))][:1])+
		corpusVerbs[r.IntN(len(corpusVerbs))][1:], corpusObjects[r.IntN(len(corpusObjects))], svc,
		corpusWhy[r.IntN(len(corpusWhy))])
}

func section(r *rand.Rand, b *strings.Builder, heading, svc string, sentences int) {
	fmt.Fprintf(b, "## %s\n\n", heading)
	for i := range sentences {
		b.WriteString(sentence(r, svc))
		b.WriteByte(' ')
		if i%3 == 2 {
			b.WriteString("\n\n")
		}
	}
	fmt.Fprintf(b, "\n\n```sh\n"+corpusCommands[r.IntN(len(corpusCommands))]+"\n```\n\n", svc)
}

// genCorpus returns n documents of about 2 KB spread over 10 organizations of 5 projects each plus their
// org-wide folders.
func genCorpus(n int) []corpusDoc {
	r := rand.New(rand.NewPCG(42, 2026))
	docs := make([]corpusDoc, 0, n)
	for i := range n {
		svc := corpusServices[r.IntN(len(corpusServices))]
		problem := corpusProblems[r.IntN(len(corpusProblems))]
		org := fmt.Sprintf("org%02d", i%10)
		project := fmt.Sprintf("proj%d", (i/10)%6)
		if project == "proj5" {
			project = ""
		}
		collection := []string{CollectionRunbooks, CollectionRunbooks, CollectionIncidents, CollectionFacts}[i%4]
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntags: [%s, %s]\n---\n# %s: %s\n\n", svc, strings.ReplaceAll(strings.ToLower(problem), " ", "-"), svc, problem)
		b.WriteString(sentence(r, svc) + " " + sentence(r, svc) + "\n\n")
		section(r, &b, "Symptoms", svc, 4)
		section(r, &b, "Diagnosis", svc, 6)
		section(r, &b, "Mitigation", svc, 7)
		section(r, &b, "Escalation", svc, 3)
		docs = append(docs, corpusDoc{
			scope:      Scope{OrgID: org, ProjectID: project},
			collection: collection,
			name:       fmt.Sprintf("%s/%s-%05d.md", svc, strings.ReplaceAll(strings.ToLower(problem), " ", "-"), i),
			content:    b.String(),
		})
	}
	return docs
}

// writeCorpus lays the documents out as an operator copying them in would, and returns their total size.
func writeCorpus(tb testing.TB, dir string, docs []corpusDoc) int64 {
	tb.Helper()
	var total int64
	mtime := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range docs {
		p := filepath.Join(dir, "docs", filepath.FromSlash(d.scope.folder()), d.collection, filepath.FromSlash(d.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(d.content), 0o600); err != nil {
			tb.Fatal(err)
		}
		os.Chtimes(p, mtime, mtime)
		total += int64(len(d.content))
	}
	return total
}

func TestCorpusIsRealistic(t *testing.T) {
	docs := genCorpus(200)
	var total int
	for _, d := range docs {
		total += len(d.content)
		if validateName(d.name) != nil || validateScope(d.scope) != nil {
			t.Fatalf("generated an invalid document %+v", d)
		}
	}
	if avg := total / len(docs); avg < 1500 || avg > 2600 {
		t.Fatalf("average document %d bytes, want about 2 KB", avg)
	}
	if genCorpus(3)[2].content != docs[2].content {
		t.Fatal("corpus is not deterministic")
	}
	dir := t.TempDir()
	writeCorpus(t, dir, docs)
	s := openStore(t, dir, Options{})
	if st := s.Stats(Scope{}); st.Documents != len(docs) {
		t.Fatalf("indexed %d documents, want %d", st.Documents, len(docs))
	}
	svc, _, _ := strings.Cut(docs[0].name, "/")
	if hits := search(t, s, docs[0].scope, Query{Text: svc + " mitigation"}); len(hits) == 0 {
		t.Fatal("a corpus query found nothing")
	}
}
