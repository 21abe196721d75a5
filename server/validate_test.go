package server

import (
	"encoding/json"
	"net/url"
	"testing"
)

type listQuery struct {
	Limit  int     `query:"limit" default:"25" validate:"gte=1,lte=200"`
	Small  int32   `query:"small" validate:"gte=0,lte=10"`
	Ratio  float64 `query:"ratio" validate:"gte=0,lte=1"`
	Period string  `query:"period" default:"30d" validate:"oneof=7d 30d 90d all"`
	Status *string `query:"status"`
	Must   string  `query:"must" validate:"required"`
	Active bool    `query:"active"`
}

func locs(err error) []string {
	ve, ok := err.(*ValidationError)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range ve.Errors {
		b, _ := json.Marshal(e.Loc)
		out = append(out, string(b))
	}
	return out
}

func TestBindQuery(t *testing.T) {
	t.Parallel()
	var q listQuery
	if err := bindQuery(url.Values{"must": {"x"}}, &q); err != nil {
		t.Fatal(err)
	}
	if q.Limit != 25 || q.Period != "30d" || q.Status != nil {
		t.Fatalf("defaults: %+v", q)
	}
	cases := map[string]url.Values{
		`["query","limit"]`:  {"must": {"x"}, "limit": {"201"}}, // never clamped
		`["query","period"]`: {"must": {"x"}, "period": {"1y"}},
		`["query","must"]`:   {},
		`["query","small"]`:  {"must": {"x"}, "small": {"4294967297"}}, // would wrap to 1 in an int32
		`["query","ratio"]`:  {"must": {"x"}, "ratio": {"NaN"}},
		`["query","active"]`: {"must": {"x"}, "active": {"maybe"}},
	}
	for want, v := range cases {
		var q listQuery
		got := locs(bindQuery(v, &q))
		if len(got) != 1 || got[0] != want {
			t.Fatalf("%v: got %v, want %s", v, got, want)
		}
	}
	for _, inf := range []string{"Inf", "-Inf", "1e400"} {
		var q listQuery
		if bindQuery(url.Values{"must": {"x"}, "ratio": {inf}}, &q) == nil {
			t.Fatalf("ratio %s accepted", inf)
		}
	}
	var q2 listQuery
	if err := bindQuery(url.Values{"must": {"x"}, "status": {"open"}, "limit": {"1", "200"}, "active": {"on"}}, &q2); err != nil || *q2.Status != "open" || q2.Limit != 200 || !q2.Active {
		t.Fatalf("values: %+v %v", q2, err)
	}
}

type inner struct {
	Level int `json:"level" validate:"gte=1,lte=5"`
}

type body struct {
	Name  string   `json:"name" validate:"required,min=1,max=5"`
	Kind  string   `json:"kind,omitempty" validate:"oneof=a b"`
	Tags  []string `json:"tags,omitempty" validate:"max=2,oneof=x y"`
	Inner *inner   `json:"inner,omitempty"`
	Note  *string  `json:"note,omitempty" validate:"nonnull"`
	Code  string   `json:"code,omitempty" validate:"pattern=^[a-z]+,[0-9]+$"`
	Count int      `json:"count,omitempty"`
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	var b body
	if err := decodeJSON([]byte(`{"name":"ok","kind":"a","tags":["x"],"inner":{"level":3},"code":"ab,12","unknown":1}`), &b); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		`{"name":"toolong"}`:                  `["body","name"]`,
		`{"name":"ok","kind":"c"}`:            `["body","kind"]`,
		`{"name":"ok","tags":["x","z"]}`:      `["body","tags",1]`,
		`{"name":"ok","tags":["x","y","x"]}`:  `["body","tags"]`,
		`{"name":"ok","inner":{"level":9}}`:   `["body","inner","level"]`,
		`{"name":"ok","inner":{"level":"9"}}`: `["body","inner","level"]`,
		`{"name":"ok","note":null}`:           `["body","note"]`,
		`{"name":"ok","code":"ab12"}`:         `["body","code"]`,
		`{"name":"ok","count":1.5}`:           `["body","count"]`,
		`{"name":null}`:                       `["body","name"]`,
		`[]`:                                  `["body"]`,
		`{"name":`:                            `["body"]`,
		` `:                                   `["body"]`,
	}
	for in, want := range cases {
		var b body
		got := locs(decodeJSON([]byte(in), &b))
		if len(got) == 0 || got[0] != want {
			t.Fatalf("%s: got %v, want %s", in, got, want)
		}
	}
	// All problems at once.
	if got := locs(decodeJSON([]byte(`{"kind":"c","count":"x"}`), &b)); len(got) != 2 {
		t.Fatalf("want the missing name and the bad count together, got %v", got)
	}
}
