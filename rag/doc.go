// Package rag is the agent's knowledge: a retrieval store whose source of truth is a tree of plain files
// under the data directory, with a bleve full-text index beside it that can always be rebuilt from them.
//
// # Layout
//
// Everything lives under the directory given to [Open] (the server passes DATA_DIR/rag):
//
//	docs/<org_id>/<project_id>/<collection>/<name>   documents of one project
//	docs/<org_id>/_org/<collection>/<name>           documents of the whole organization
//	index/                                           the bleve index (disposable)
//
// Collections are fixed: runbooks, facts, incidents and memories (the agent's long-term memory). A name is a
// relative slash path such as "k8s/restart-pod.md"; it ends in .md, .markdown or .txt and no segment is
// hidden. Org-wide documents (project "_org", written with an empty [Scope.ProjectID]) are found by the
// searches of every project of that organization; a project's documents are never found by another.
//
// # Files stay the source of truth
//
// A document may start with a small YAML front-matter block that carries its tags (and optionally a title):
//
//	---
//	title: Restart a stuck pod
//	tags: [k8s, oncall]
//	---
//	# Restart a stuck pod
//	...
//
// Tags are lower-case letters, digits and ._:/- (at most 32 of 64 bytes); "tags: a, b" and a block list work
// too. Operators may copy, edit or delete files by hand: [Store.Sync] (run by [Store.Start] every
// [Options.SyncInterval], or by the scheduler) reconciles the index with the files, using a manifest of
// path, size, modification time and SHA-256 that is kept inside the index and committed in the same batch
// as the chunks it describes. [Store.Put] writes atomically (temporary file, fsync, rename, fsync of the
// directory) before it indexes, so an acknowledged write survives a crash even when the index does not: the
// reconciliation at [Open] re-indexes whatever the index lost, and a missing or unreadable index is rebuilt
// from the files.
//
// Sync looks only where Put writes: org and project folders named like ids (or _org), known collections,
// valid names. It skips hidden entries and symbolic links, and logs once (then skips until the file changes)
// files that are over Options.MaxDocBytes or not UTF-8 text. Put and Get work through an [os.Root] opened on
// the project's folder, so not even a symbolic link planted there leads them outside it.
//
// # Several servers: the documents in a database
//
// With [Options.Source] (the server sets it on a PostgreSQL cluster) the documents are not files: the Source
// (the database) holds them and numbers every change, deletions included, and the index under dir is this
// server's cache of it. Put and Delete write to the Source (in the caller's transaction when its ctx carries
// one) and apply the change to the index at once; Get and List read the Source; Search reads the index. Open
// rebuilds the index from the Source's whole feed, re-indexing only content it does not hold, and Start
// follows the feed every [Options.FollowInterval], so what another server wrote is found within about a
// second. An erased organization is one change of the feed too: every index drops all it holds of it. The
// Source may prune old deletions from its feed; a follower it tells that its position is below what was
// pruned rebuilds from the whole feed instead of following, so it never keeps a deleted document. See
// source.go and follow.go.
//
// Markdown is split at its headings so that a hit points at the section that answers; long sections are cut
// at paragraph, then word boundaries with a small overlap.
package rag
