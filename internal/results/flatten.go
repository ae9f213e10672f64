package results

import (
	"encoding/json"
	"sort"
)

// Flatten turns nested JSON into dotted keys with string values, for
// context tables and differences between profiles.
func Flatten(raw json.RawMessage) map[string]string {
	out := map[string]string{}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, x[k])
			}
		case nil:
		case string:
			out[prefix] = x
		default:
			b, _ := json.Marshal(x)
			out[prefix] = string(b)
		}
	}
	walk("", v)
	return out
}
