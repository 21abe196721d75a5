package pipeline

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/webhook"
)

// oldCorrelationKeys is how correlation counted alerts and picked keys
// with one map; the slices it keeps now must give the same.
func oldCorrelationKeys(ev webhook.Event) (count int, fps, keys []string) {
	seen := map[string]bool{}
	for _, a := range ev.Alerts {
		if fp := a.Fingerprint; fp == "" || !seen["alert:"+fp] {
			count++
			if fp != "" {
				seen["alert:"+fp] = true
				fps = append(fps, fp)
			}
		}
		k := ""
		switch {
		case a.GroupKey != "":
			k = "group:" + a.GroupKey
		case a.Fingerprint != "":
			k = "fp:" + a.Fingerprint
		}
		if k != "" && !seen[k] && len(keys) < 50 {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return count, fps, keys
}

func TestCorrelationKeysAsBefore(t *testing.T) {
	evs := providerEvents(t)
	for _, n := range []int{3, 17, 80} {
		var as []webhook.Alert
		for i := 0; i < n; i++ {
			as = append(as, webhook.Alert{Fingerprint: fmt.Sprint("f", i%7), GroupKey: fmt.Sprint("g", i%3*(i%2))},
				webhook.Alert{Fingerprint: fmt.Sprint("f", i)}, webhook.Alert{GroupKey: fmt.Sprint("k", i)}, webhook.Alert{})
		}
		evs = append(evs, webhook.Event{Type: "x", Alerts: as})
	}
	for _, ev := range evs {
		c := correlation(ev, "", time.Minute)
		count, fps, keys := oldCorrelationKeys(ev)
		if len(keys) == 0 {
			if c != nil {
				t.Fatalf("%s: correlation without keys", ev.Type)
			}
			continue
		}
		if c.AlertCount != count || !reflect.DeepEqual(c.Fingerprints, fps) || !reflect.DeepEqual(c.Keys, keys) {
			t.Fatalf("%s: got %d %q %q, want %d %q %q", ev.Type, c.AlertCount, c.Fingerprints, c.Keys, count, fps, keys)
		}
	}
}
