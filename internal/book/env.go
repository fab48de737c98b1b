package book

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/ownership-book/ownership/internal/diag"
)

// envOverride is one MDBOOK_ environment variable that sets a book.toml
// key, as mdBook's Config::update_from_env reads it (mdbook-core
// src/config.rs): the name without "MDBOOK_", lower-cased, "__" a dot and
// "_" a dash (MDBOOK_OUTPUT__HTML__SMART_PUNCTUATION is
// output.html.smart-punctuation), the value JSON or, when it is no JSON, a
// string.
type envOverride struct {
	name  string   // the variable, "MDBOOK_BOOK__TITLE"
	path  []string // the key, ["book", "title"]
	value any
}

// envOverrides returns the MDBOOK_ variables of environ ("NAME=value"
// entries, as os.Environ gives them) that name a key of mdBook's tables
// (book, build, rust, output, preprocessor), sorted by name; mdBook ignores
// the others (MDBOOK_VERSION for an author's own scripts), and so does
// bookgen.
func envOverrides(environ []string) []envOverride {
	var out []envOverride
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		rest, isBook := strings.CutPrefix(name, "MDBOOK_")
		if !ok || !isBook {
			continue
		}
		key := strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(rest), "__", "."), "_", "-")
		path := strings.Split(key, ".")
		switch path[0] {
		case "book", "build", "rust", "output", "preprocessor":
		default:
			continue
		}
		var v any
		if json.Unmarshal([]byte(value), &v) != nil {
			v = value
		}
		out = append(out, envOverride{name: name, path: path, value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// applyEnv sets each override's key in f, replacing what book.toml gave it
// (a whole table for MDBOOK_BOOK, as in mdBook). A key bookgen does not read
// is a warning naming the variable, as the same key in book.toml is; a
// value of the wrong type is an error naming it. All problems are returned
// at once, in the variables' order.
func applyEnv(f *tomlFile, overrides []envOverride) (warnings []*diag.Error, errs diag.List) {
	for _, o := range overrides {
		var doc any = o.value
		for i := len(o.path) - 1; i >= 0; i-- {
			doc = map[string]any{o.path[i]: doc}
		}
		snippet, err := toml.Marshal(doc)
		if err != nil {
			errs = append(errs, diag.Errorf(o.name, 0, "environment variable: %v", err))
			continue
		}
		var g tomlFile
		err = toml.NewDecoder(bytes.NewReader(snippet)).DisallowUnknownFields().Decode(&g)
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			for i := range strict.Errors {
				warnings = append(warnings, diag.Errorf(o.name, 0, "key %s is not used by bookgen", strings.Join(strict.Errors[i].Key(), ".")))
			}
			g = tomlFile{}
			err = toml.NewDecoder(bytes.NewReader(snippet)).Decode(&g)
		}
		var dec *toml.DecodeError
		switch {
		case errors.As(err, &dec):
			msg := strings.TrimPrefix(dec.Error(), "toml: ")
			if m := typeErrRE.FindStringSubmatch(msg); m != nil {
				msg = strings.Join(dec.Key(), ".") + " is a TOML " + m[1] + ", want " + m[2]
			} else if k := dec.Key(); len(k) > 0 {
				msg = strings.Join(k, ".") + ": " + msg
			}
			errs = append(errs, diag.Errorf(o.name, 0, "environment variable: %s", msg))
			continue
		case err != nil:
			errs = append(errs, diag.Errorf(o.name, 0, "environment variable: %v", err))
			continue
		}
		setPath(reflect.ValueOf(f).Elem(), reflect.ValueOf(&g).Elem(), o.path)
	}
	return warnings, errs
}

// setPath copies the field (or map entry) at path from src to dst, two
// values of one struct type whose fields carry toml tags. A path into a
// key bookgen does not read copies nothing.
func setPath(dst, src reflect.Value, path []string) {
	if len(path) == 0 {
		dst.Set(src)
		return
	}
	switch dst.Kind() {
	case reflect.Struct:
		t := dst.Type()
		for i := 0; i < t.NumField(); i++ {
			if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); tag == path[0] {
				setPath(dst.Field(i), src.Field(i), path[1:])
				return
			}
		}
	case reflect.Map:
		if src.IsNil() {
			return
		}
		k := reflect.ValueOf(path[0])
		v := src.MapIndex(k)
		if !v.IsValid() {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMap(dst.Type()))
		}
		if len(path) == 1 {
			dst.SetMapIndex(k, v)
			return
		}
		cur := reflect.New(v.Type()).Elem()
		if old := dst.MapIndex(k); old.IsValid() {
			cur.Set(old)
		}
		setPath(cur, v, path[1:])
		dst.SetMapIndex(k, cur)
	}
}
