package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Validation rules live in struct tags, so the OpenAPI document and the
// checks come from one declaration:
//
//	validate:"required,min=1,max=120,email,oneof=a b,pattern=^x$,gte=0,lte=10"
//
// min/max bound string length (runes) and slice length; gte/lte bound numbers.
// "required" means the key must be present (FastAPI's "missing"); a present
// JSON null for a pointer field is allowed unless "nonnull" is set.
// "required_without=other" (query parameters) means the parameter must be
// given, non-empty, unless the query parameter other is. "omitzero" (numbers)
// means 0 stands for "not given" and the bounds apply to any other value.

type rule struct {
	required, email, nonnull bool
	omitzero                 bool
	requiredWithout          string
	min, max                 *int
	gte, lte                 *float64
	oneof                    []string
	pattern                  *regexp.Regexp
	patternSrc               string
}

var ruleCache sync.Map // reflect.StructField tag -> *rule

func parseRule(tag string) *rule {
	if v, ok := ruleCache.Load(tag); ok {
		return v.(*rule)
	}
	r := &rule{}
	key := tag
	// pattern may contain commas, so it must come last.
	if i := strings.Index(tag, "pattern="); i >= 0 {
		r.patternSrc = tag[i+len("pattern="):]
		r.pattern = regexp.MustCompile(r.patternSrc)
		tag = strings.TrimSuffix(tag[:i], ",")
	}
	for _, part := range strings.Split(tag, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "required":
			r.required = true
		case "email":
			r.email = true
		case "nonnull":
			r.nonnull = true
		case "omitzero":
			r.omitzero = true
		case "required_without":
			r.requiredWithout = v
		case "min", "max":
			n, err := strconv.Atoi(v)
			if err != nil {
				panic("validate: bad " + k + " in " + tag)
			}
			if k == "min" {
				r.min = &n
			} else {
				r.max = &n
			}
		case "gte", "lte":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				panic("validate: bad " + k + " in " + tag)
			}
			if k == "gte" {
				r.gte = &f
			} else {
				r.lte = &f
			}
		case "oneof":
			r.oneof = strings.Fields(v)
		case "":
		default:
			panic("validate: unknown rule " + k)
		}
	}
	ruleCache.Store(key, r)
	return r
}

// decodeBody reads a JSON body (already capped by MaxBytesReader) into dst
// and validates it. Every problem is reported at once, FastAPI style.
func decodeBody(body io.Reader, dst any) error {
	raw, err := io.ReadAll(body)
	if err != nil {
		var mbe interface{ Error() string }
		if errors.As(err, &mbe) {
			return err
		}
		return err
	}
	return decodeJSON(raw, dst)
}

func decodeJSON(raw []byte, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return invalid("Field required", "missing", "body")
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return invalid("JSON decode error: "+err.Error(), "json_invalid", "body")
	}
	obj, ok := generic.(map[string]any)
	if !ok {
		return invalid("Input should be a valid object", "model_attributes_type", "body")
	}
	var errs []FieldError
	checkTypes(reflect.TypeOf(dst).Elem(), obj, []any{"body"}, &errs)
	if len(errs) > 0 {
		return &ValidationError{Errors: errs}
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			loc := []any{"body"}
			for _, p := range strings.Split(te.Field, ".") {
				loc = append(loc, p)
			}
			return invalid("Input should be a valid "+te.Type.Kind().String(), "type_error", loc...)
		}
		return invalid(err.Error(), "value_error", "body")
	}
	validateStruct(reflect.ValueOf(dst).Elem(), obj, []any{"body"}, &errs)
	if len(errs) > 0 {
		return &ValidationError{Errors: errs}
	}
	return nil
}

// checkTypes reports presence and JSON type mismatches before decoding, so
// every wrong field is listed (encoding/json stops at the first).
func checkTypes(t reflect.Type, obj map[string]any, loc []any, errs *[]FieldError) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := jsonName(f)
		if name == "" {
			continue
		}
		floc := append(append([]any{}, loc...), name)
		v, present := obj[name]
		r := parseRule(f.Tag.Get("validate"))
		if !present {
			if r.required {
				*errs = append(*errs, FieldError{Loc: floc, Msg: "Field required", Type: "missing"})
			}
			continue
		}
		ft := f.Type
		if v == nil {
			if (ft.Kind() != reflect.Pointer && ft.Kind() != reflect.Slice && ft.Kind() != reflect.Map && ft.Kind() != reflect.Interface) || r.nonnull {
				*errs = append(*errs, FieldError{Loc: floc, Msg: "Input should not be null", Type: "null_not_allowed"})
			}
			continue
		}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if msg, typ := jsonTypeMismatch(ft, v); msg != "" {
			*errs = append(*errs, FieldError{Loc: floc, Msg: msg, Type: typ})
			continue
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeOf(time.Time{}) {
			if sub, ok := v.(map[string]any); ok {
				checkTypes(ft, sub, floc, errs)
			}
		}
	}
}

func jsonTypeMismatch(t reflect.Type, v any) (string, string) {
	if t == reflect.TypeOf(time.Time{}) {
		s, ok := v.(string)
		if !ok {
			return "Input should be a valid datetime", "datetime_type"
		}
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "Input should be a valid datetime (RFC 3339)", "datetime_parsing"
		}
		return "", ""
	}
	if t == reflect.TypeOf(json.RawMessage{}) {
		return "", ""
	}
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			return "Input should be a valid string", "string_type"
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return "Input should be a valid boolean", "bool_type"
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		f, ok := v.(float64)
		if !ok || f != float64(int64(f)) {
			return "Input should be a valid integer", "int_type"
		}
	case reflect.Float64, reflect.Float32:
		if _, ok := v.(float64); !ok {
			return "Input should be a valid number", "float_type"
		}
	case reflect.Slice:
		if _, ok := v.([]any); !ok {
			return "Input should be a valid list", "list_type"
		}
	case reflect.Map, reflect.Struct:
		if _, ok := v.(map[string]any); !ok {
			return "Input should be a valid dictionary", "dict_type"
		}
	}
	return "", ""
}

func validateStruct(v reflect.Value, obj map[string]any, loc []any, errs *[]FieldError) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := jsonName(f)
		if name == "" {
			continue
		}
		if obj != nil {
			if _, present := obj[name]; !present {
				continue
			}
		}
		floc := append(append([]any{}, loc...), name)
		checkValue(v.Field(i), parseRule(f.Tag.Get("validate")), floc, errs)
		fv := v.Field(i)
		if fv.Kind() == reflect.Pointer && !fv.IsNil() {
			fv = fv.Elem()
		}
		if fv.Kind() == reflect.Struct && fv.Type() != reflect.TypeOf(time.Time{}) {
			var sub map[string]any
			if obj != nil {
				sub, _ = obj[name].(map[string]any)
			}
			validateStruct(fv, sub, floc, errs)
		}
	}
}

func checkValue(v reflect.Value, r *rule, loc []any, errs *[]FieldError) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	add := func(msg, typ string) { *errs = append(*errs, FieldError{Loc: loc, Msg: msg, Type: typ}) }
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		n := len([]rune(s))
		if r.min != nil && n < *r.min {
			add(fmt.Sprintf("String should have at least %d character%s", *r.min, plural(*r.min)), "string_too_short")
			return
		}
		if r.max != nil && n > *r.max {
			add(fmt.Sprintf("String should have at most %d character%s", *r.max, plural(*r.max)), "string_too_long")
			return
		}
		if r.email && !validEmail(s) {
			add("value is not a valid email address", "value_error")
			return
		}
		if r.oneof != nil && !contains(r.oneof, s) {
			add("Input should be "+quoteList(r.oneof), "enum")
			return
		}
		if r.pattern != nil && !r.pattern.MatchString(s) {
			add("String should match pattern '"+r.patternSrc+"'", "string_pattern_mismatch")
		}
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		var f float64
		if v.Kind() == reflect.Float64 {
			f = v.Float()
		} else {
			f = float64(v.Int())
		}
		if r.omitzero && f == 0 {
			return
		}
		if r.gte != nil && f < *r.gte {
			add("Input should be greater than or equal to "+trimFloat(*r.gte), "greater_than_equal")
		} else if r.lte != nil && f > *r.lte {
			add("Input should be less than or equal to "+trimFloat(*r.lte), "less_than_equal")
		}
	case reflect.Slice:
		if r.min != nil && v.Len() < *r.min {
			add(fmt.Sprintf("List should have at least %d item%s", *r.min, plural(*r.min)), "too_short")
		} else if r.max != nil && v.Len() > *r.max {
			add(fmt.Sprintf("List should have at most %d item%s", *r.max, plural(*r.max)), "too_long")
		}
		if r.oneof != nil && v.Type().Elem().Kind() == reflect.String {
			for i := 0; i < v.Len(); i++ {
				if !contains(r.oneof, v.Index(i).String()) {
					*errs = append(*errs, FieldError{Loc: append(append([]any{}, loc...), i), Msg: "Input should be " + quoteList(r.oneof), Type: "enum"})
				}
			}
		}
	}
}

func validEmail(s string) bool {
	if len(s) > 254 || strings.ContainsAny(s, " \t\r\n<>") {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	return at > 0 && strings.Contains(s[at+1:], ".")
}

func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

// trimNonBlank trims *s in place and refuses what is left empty, like a
// min=1 rule on the body field named field; nil (a patch that leaves the
// field alone) passes.
func trimNonBlank(s *string, field string) error {
	if s == nil {
		return nil
	}
	if *s = strings.TrimSpace(*s); *s == "" {
		return invalid("String should have at least 1 character", "string_too_short", "body", field)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = "'" + s + "'"
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
