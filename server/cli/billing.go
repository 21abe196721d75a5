package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

// Billing is the org's, not a project's: these commands send no project.

var monthRE = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])$`)

type usageOut struct {
	Period     string             `json:"period"`
	Status     string             `json:"status"`
	PlanID     string             `json:"plan_id"`
	ComputedAt time.Time          `json:"computed_at"`
	Meters     map[string]float64 `json:"meters"`
}

type statementOut struct {
	Period   string `json:"period"`
	Status   string `json:"status"`
	PlanID   string `json:"plan_id"`
	PlanName string `json:"plan_name"`
	Lines    []struct {
		ProjectID    string  `json:"project_id"`
		ProjectName  string  `json:"project_name"`
		Meter        string  `json:"meter"`
		Quantity     float64 `json:"quantity"`
		Unit         string  `json:"unit"`
		UnitPriceUSD float64 `json:"unit_price_usd"`
		AmountUSD    float64 `json:"amount_usd"`
	} `json:"lines"`
	TotalUSD float64 `json:"total_usd"`
}

func (a *app) billingCmd() *cobra.Command {
	return group("billing", "The organization's metered usage and monthly statements", a.billingUsageCmd(), a.billingStatementCmd())
}

func qty(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func (a *app) billingUsageCmd() *cobra.Command {
	var period string
	cmd := &cobra.Command{Use: "usage", Short: "Metered usage of a month (default: the current one)", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if period != "" && !monthRE.MatchString(period) {
				return usageErrorf(cmd, "--period must look like 2026-11, not %q", period)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			q := url.Values{}
			if period != "" {
				q.Set("period", period)
			}
			var u usageOut
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "GET", "/api/billing/usage", q, nil, &u, &raw); err != nil {
				return err
			}
			return a.emit(raw, []string{u.Period}, func() {
				a.out.fields([][2]string{{"period", u.Period}, {"status", u.Status}, {"plan", u.PlanID}, {"computed", ago(u.ComputedAt)}})
				fmt.Fprintln(a.inv.Stdout)
				meters := make([]string, 0, len(u.Meters))
				for m := range u.Meters {
					meters = append(meters, m)
				}
				sort.Strings(meters)
				rows := make([][]string, len(meters))
				for i, m := range meters {
					rows[i] = []string{m, qty(u.Meters[m])}
				}
				a.out.table([]string{"METER", "QUANTITY"}, rows)
			})
		}}
	cmd.Flags().StringVar(&period, "period", "", "month as YYYY-MM (default: the current month, UTC)")
	return cmd
}

func (a *app) billingStatementCmd() *cobra.Command {
	var month, format string
	cmd := &cobra.Command{Use: "statement", Short: "A month's statement: plan fee and a line per project and meter (--format csv|json exports it)", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if month == "" {
				month = time.Now().UTC().Format("2006-01")
			}
			if !monthRE.MatchString(month) {
				return usageErrorf(cmd, "--month must look like 2026-11, not %q", month)
			}
			switch format {
			case "", "csv", "json":
			default:
				return usageErrorf(cmd, "--format must be csv or json, not %q", format)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			path := "/api/billing/statements/" + url.PathEscape(month)
			if format != "" {
				// The server's export, byte for byte (what the console downloads).
				var raw json.RawMessage
				if err := c.call(cmd.Context(), "GET", path, url.Values{"format": {format}}, nil, nil, &raw); err != nil {
					return err
				}
				_, err := a.inv.Stdout.Write(raw)
				return err
			}
			var st statementOut
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "GET", path, nil, nil, &st, &raw); err != nil {
				return err
			}
			return a.emit(raw, []string{st.Period}, func() {
				a.out.fields([][2]string{{"period", st.Period}, {"status", st.Status}, {"plan", st.PlanName + " (" + st.PlanID + ")"}})
				fmt.Fprintln(a.inv.Stdout)
				rows := make([][]string, len(st.Lines))
				for i, l := range st.Lines {
					price := "-"
					if l.UnitPriceUSD != 0 {
						price = "$" + qty(l.UnitPriceUSD) + " / " + l.Unit
					}
					rows[i] = []string{dash(l.ProjectName), l.Meter, qty(l.Quantity), price, fmt.Sprintf("$%.2f", l.AmountUSD)}
				}
				a.out.table([]string{"PROJECT", "METER", "QUANTITY", "PRICE", "AMOUNT"}, rows)
				fmt.Fprintf(a.inv.Stdout, "\ntotal %s\n", a.out.paint(bold, fmt.Sprintf("$%.2f", st.TotalUSD)))
			})
		}}
	cmd.Flags().StringVar(&month, "month", "", "month as YYYY-MM (default: the current month, UTC)")
	cmd.Flags().StringVar(&format, "format", "", "csv or json: print the server's export as is")
	return cmd
}
