package webhook

// decodeAM decodes an Alertmanager-shaped payload (Alertmanager, Grafana
// unified alerting): the receiver's hottest path. A hand-written reader
// takes the plain shape every Alertmanager sends, about four times faster
// than encoding/json with a fraction of its allocations (strings share one
// copy of the body); anything it is not sure of (a type mismatch, a key
// that differs from a field only in case, a repeated field, a null inside a
// label map, invalid JSON) sends the body through encoding/json, so what is
// accepted, what is refused and the error messages are encoding/json's.
func decodeAM(provider string, body []byte, p *amPayload) error {
	if amFast(body, p) {
		return nil
	}
	// A payload of its own for encoding/json (which keeps it on the heap),
	// so the caller's stays on its stack on the fast path.
	q := new(amPayload)
	err := decode(provider, body, q)
	q.pick()
	*p = *q
	return err
}

// amFast is the fast reader; false means "not sure": the caller starts over
// with encoding/json. It only accepts what encoding/json accepts, with the
// same result.
func amFast(body []byte, p *amPayload) bool {
	r := amReader{b: body, s: string(body)}
	r.ws()
	if !r.payload(p) {
		return false
	}
	r.ws()
	return r.i == len(r.b)
}

var amPayloadFields = []string{"version", "groupKey", "status", "receiver", "groupLabels", "commonLabels",
	"commonAnnotations", "externalURL", "alerts", "title", "state", "message"}

func (r *amReader) payload(p *amPayload) bool {
	var seen uint32
	return r.object(func(key string) bool {
		k, ok := field(key, amPayloadFields, &seen)
		if !ok {
			return false
		}
		switch k {
		case 0:
			var s string
			if !r.optStr(&s) {
				return false
			}
			p.Version = text(s)
			return true
		case 1:
			return r.optStr(&p.GroupKey)
		case 2:
			return r.optStr(&p.Status)
		case 3:
			return r.optStr(&p.Receiver)
		case 4:
			return r.strMap(nil) // checked, not kept: nothing reads it
		case 5:
			return r.strPicks(func(k, v string) {
				if k == "severity" {
					p.commonSeverity = v
				}
			})
		case 6:
			return r.strPicks(func(k, v string) {
				if k == "summary" {
					p.commonSummary = v
				}
			})
		case 7:
			return r.optStr(&p.ExternalURL)
		case 8:
			return r.alerts(&p.Alerts)
		case 9:
			return r.optStr(&p.Title)
		case 10:
			return r.optStr(&p.State)
		case 11:
			return r.optStr(&p.Message)
		}
		return r.skip(0)
	})
}

var amAlertFields = []string{"status", "labels", "annotations", "startsAt", "endsAt", "generatorURL",
	"fingerprint", "dashboardURL", "panelURL", "silenceURL", "valueString"}

func (r *amReader) alerts(dst *[]amAlert) bool {
	if r.lit("null") {
		*dst = nil
		return true
	}
	if r.next() != '[' {
		return false
	}
	r.i++
	out := []amAlert{}
	if r.next() == ']' {
		r.i++
		*dst = out
		return true
	}
	for {
		var a amAlert
		if !r.alert(&a) {
			return false
		}
		out = append(out, a)
		switch r.next() {
		case ',':
			r.i++
		case ']':
			r.i++
			*dst = out
			return true
		default:
			return false
		}
	}
}

func (r *amReader) alert(a *amAlert) bool {
	var seen uint32
	return r.object(func(key string) bool {
		k, ok := field(key, amAlertFields, &seen)
		if !ok {
			return false
		}
		switch k {
		case 0:
			return r.optStr(&a.Status)
		case 1:
			return r.strMap(&a.Labels)
		case 2:
			return r.strPicks(a.ann.set)
		case 3:
			return r.optStr(&a.StartsAt)
		case 4:
			return r.optStr(&a.EndsAt)
		case 5:
			return r.optStr(&a.GeneratorURL)
		case 6:
			return r.optStr(&a.Fingerprint)
		case 7:
			return r.optStr(&a.DashboardURL)
		case 8:
			return r.optStr(&a.PanelURL)
		case 9:
			return r.optStr(&a.SilenceURL)
		case 10:
			return r.optStr(&a.ValueString)
		}
		return r.skip(0)
	})
}
