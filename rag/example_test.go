package rag_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/opsagent/opsagent/rag"
)

func Example() {
	dir, _ := os.MkdirTemp("", "rag-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	store, err := rag.Open(ctx, dir, rag.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	store.Start(ctx) // picks up files edited by hand every Options.SyncInterval

	project := rag.Scope{OrgID: "acme", ProjectID: "checkout"}
	runbook := "# Payments API\n\n## High latency\n\nCheck the connection pool, then scale the workers.\n"
	if _, err := store.Put(ctx, project, rag.CollectionRunbooks, "payments.md", []byte(runbook), []string{"payments"}); err != nil {
		log.Fatal(err)
	}

	hits, err := store.Search(ctx, project, rag.Query{Text: "latency connection pool", Limit: 3})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Println(h.Collection, h.Name, strings.Join(h.Headings, " > "))
		fmt.Println(h.Snippet)
	}
	// Output:
	// runbooks payments.md Payments API > High latency
	// Check the connection pool, then scale the workers.
}
