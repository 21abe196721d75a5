package eval

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"strings"
)

//go:embed report.html.tmpl
var reportFS embed.FS

var reportTmpl = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"pct":  func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
	"ci":   func(c [2]float64) string { return fmt.Sprintf("%.0f–%.0f%%", 100*c[0], 100*c[1]) },
	"usd":  func(f float64) string { return fmt.Sprintf("$%.4f", f) },
	"num":  func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"join": strings.Join,
	"at":   func(xs []int, i int) int { return xs[i] },
	"str":  func(xs []string, i int) string { return xs[i] },
	"cell": func(p, n int) string {
		switch {
		case n == 0:
			return "skip"
		case p == n:
			return "pass"
		case p == 0:
			return "fail"
		}
		return "mixed"
	},
}).ParseFS(reportFS, "report.html.tmpl"))

// WriteHTML writes the report as one self-contained page: no script, no
// stylesheet or font from elsewhere, so it opens from a CI artifact or a
// mail attachment and passes any content security policy.
func (r *Report) WriteHTML(w io.Writer) error {
	return reportTmpl.Execute(w, r)
}
