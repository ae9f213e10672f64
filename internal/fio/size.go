package fio

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads a file size: a number of bytes with an optional unit.
// K, M, G, T (also KiB, MiB, GiB, TiB) are powers of 1024, as in fio;
// KB, MB, GB, TB are powers of 1000. Case does not matter.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
		"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
		"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
	}[unit]
	if !ok || num == "" {
		return 0, inputErrorf("size %q: want a number with an optional unit (K, M, G, T in powers of 1024; KB, MB, GB, TB in powers of 1000)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f <= 0 || strings.Trim(num, "0123456789.") != "" {
		return 0, inputErrorf("size %q: want a positive number with an optional unit, e.g. 4G", s)
	}
	b := f * mult
	if b > 1<<60 {
		return 0, inputErrorf("size %q is too large", s)
	}
	return int64(b), nil
}

// FormatBytes writes a byte count in binary units (KiB, MiB, GiB, TiB),
// exact where it can be.
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
