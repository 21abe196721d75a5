package rag

import (
	"context"
	"fmt"
	"testing"
)

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
