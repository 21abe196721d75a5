package server

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/opsagent/opsagent/web"
)

// consoleCSP allows only the console's own files.
const consoleCSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// serveConsole serves the embedded console; unknown paths get index.html so
// client-side routes (/reset-password, /verify-email) work.
func (s *Server) serveConsole(w http.ResponseWriter, r *http.Request) {
	dist, _ := fs.Sub(web.Files, "dist")
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	h := w.Header()
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	if name != "" && name != "index.html" {
		if f, err := dist.Open(name); err == nil {
			f.Close()
			h.Set("Cache-Control", "public, max-age=3600")
			http.ServeFileFS(w, r, dist, name)
			return
		}
	}
	h.Set("Cache-Control", "no-cache")
	b, err := fs.ReadFile(dist, "index.html")
	if err != nil {
		http.Error(w, "console missing", http.StatusInternalServerError)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b)
}
