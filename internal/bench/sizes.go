package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSizes reads a comma-separated list of space sizes (as in
// HIGMEM_BENCH_TURNS, "1000,100000"); an empty list gives def.
func ParseSizes(list string, def []int) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		return def, nil
	}
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}
