package server

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a flag value in bytes that accepts units: 512MiB, 2GB, 1048576.
type ByteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

func (b *ByteSize) String() string { return FormatBytes(uint64(*b)) }

// Set parses a size; the unit is case-insensitive and optional (bytes).
func (b *ByteSize) Set(v string) error {
	v = strings.TrimSpace(v)
	mult := int64(1)
	for _, u := range byteUnits {
		if len(v) > len(u.suffix) && strings.EqualFold(v[len(v)-len(u.suffix):], u.suffix) {
			v, mult = strings.TrimSpace(v[:len(v)-len(u.suffix)]), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a size such as 512MiB, 2GB or 1048576", v)
	}
	*b = ByteSize(n * float64(mult))
	return nil
}
