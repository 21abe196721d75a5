package server

import (
	"math"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// bindQuery fills dst (a pointer to a struct whose fields carry `query:"name"`,
// optional `default:"v"` and `validate:"..."` tags) from the URL query.
// Values that do not parse or fall outside their bounds are 422 at
// ["query", name]: never silently clamped.
func bindQuery(q url.Values, dst any) error {
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	var errs []FieldError
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("query")
		if name == "" {
			continue
		}
		loc := []any{"query", name}
		raw, present := q[name]
		val := ""
		if present && len(raw) > 0 {
			val = raw[len(raw)-1]
		} else if d, ok := f.Tag.Lookup("default"); ok {
			val, present = d, true
		}
		r := parseRule(f.Tag.Get("validate"))
		if r.requiredWithout != "" && strings.TrimSpace(val) == "" && strings.TrimSpace(q.Get(r.requiredWithout)) == "" {
			errs = append(errs, FieldError{Loc: loc, Msg: "Field required unless " + r.requiredWithout + " is given", Type: "missing"})
			continue
		}
		if !present {
			if r.required {
				errs = append(errs, FieldError{Loc: loc, Msg: "Field required", Type: "missing"})
			}
			continue
		}
		fv := v.Field(i)
		if fv.Kind() == reflect.Pointer {
			fv.Set(reflect.New(fv.Type().Elem()))
			fv = fv.Elem()
		}
		if msg, typ := setScalar(fv, val); msg != "" {
			errs = append(errs, FieldError{Loc: loc, Msg: msg, Type: typ})
			continue
		}
		checkValue(fv, r, loc, &errs)
	}
	if len(errs) > 0 {
		return &ValidationError{Errors: errs}
	}
	return nil
}

func setScalar(fv reflect.Value, val string) (string, string) {
	if fv.Type() == reflect.TypeOf(time.Time{}) {
		t, err := parseTimeParam(val)
		if err != nil {
			return "Input should be a valid datetime (RFC 3339 or YYYY-MM-DD)", "datetime_parsing"
		}
		fv.Set(reflect.ValueOf(t))
		return "", ""
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(val)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil || fv.OverflowInt(n) { // an overflow would wrap past the bounds check
			return "Input should be a valid integer, unable to parse string as an integer", "int_parsing"
		}
		fv.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) { // NaN compares false with every bound
			return "Input should be a valid number, unable to parse string as a number", "float_parsing"
		}
		fv.SetFloat(f)
	case reflect.Bool:
		switch strings.ToLower(val) {
		case "true", "1", "yes", "on":
			fv.SetBool(true)
		case "false", "0", "no", "off":
			fv.SetBool(false)
		default:
			return "Input should be a valid boolean, unable to interpret input", "bool_parsing"
		}
	}
	return "", ""
}

func parseTimeParam(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse("2006-01-02", s)
	return t.UTC(), err
}
