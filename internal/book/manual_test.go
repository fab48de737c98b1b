package book

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// tomlKeys returns every key of book.toml that parseConfig reads, as
// "[table] key" from tomlFile's toml tags ("[output.html] code.hidelines"
// for a nested table that holds values).
func tomlKeys(t reflect.Type, table, prefix string, out *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("toml")
		if f.Type.Kind() == reflect.Struct {
			if table == "" || (table == "output" && tag == "html") {
				name := tag
				if table != "" {
					name = table + "." + tag
				}
				tomlKeys(f.Type, name, "", out)
			} else {
				tomlKeys(f.Type, table, prefix+tag+".", out)
			}
			continue
		}
		*out = append(*out, "["+table+"] "+prefix+tag)
	}
}

// TestManualNamesEveryKey checks that the manual's Configuration chapter
// (manual/src/configuration.md) has a row for every key bookgen reads from
// book.toml, under its table's heading, and that knownKeys (the warning's
// list) names each. Negative control: a key added to tomlFile without a row
// fails here, naming it.
func TestManualNamesEveryKey(t *testing.T) {
	data, err := os.ReadFile("../../manual/src/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	var cur string
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			cur = strings.Trim(h, "` ")
			continue
		}
		sections[cur] += line + "\n"
	}
	var keys []string
	tomlKeys(reflect.TypeOf(tomlFile{}), "", "", &keys)
	if len(keys) < 15 {
		t.Fatalf("found %d keys in tomlFile: %q", len(keys), keys)
	}
	for _, k := range keys {
		table, key, _ := strings.Cut(k, " ")
		if !strings.Contains(sections[table], "| `"+key+"` |") {
			t.Errorf("manual/src/configuration.md: no row for %s %s under ## `%s`", table, key, table)
		}
		if !strings.Contains(knownKeys, key) {
			t.Errorf("knownKeys does not name %s", k)
		}
	}
}
