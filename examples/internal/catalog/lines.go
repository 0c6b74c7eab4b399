package catalog

import "strings"

// linesAfter returns, in order, what follows prefix on each line of out
// that starts with it.
func linesAfter(out, prefix string) []string {
	var vs []string
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			vs = append(vs, v)
		}
	}
	return vs
}
