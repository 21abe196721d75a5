// Package web embeds the console: static files served by the one binary,
// nothing loaded from a CDN.
package web

import "embed"

// Files holds the console's static assets under dist/.
//
//go:embed dist
var Files embed.FS
