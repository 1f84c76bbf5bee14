// The t-digest peer: Debian's github.com/influxdata/tdigest at a given
// compression over the samples in a file (little-endian float64s),
// printing the quantiles asked for, one per line.
// Usage: tdigest COMPRESSION FILE Q...
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/influxdata/tdigest"
)

func main() {
	c, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil {
		panic(err)
	}
	raw, err := os.ReadFile(os.Args[2])
	if err != nil {
		panic(err)
	}
	td := tdigest.NewWithCompression(c)
	for i := 0; i+8 <= len(raw); i += 8 {
		td.Add(math.Float64frombits(binary.LittleEndian.Uint64(raw[i:])), 1)
	}
	for _, a := range os.Args[3:] {
		q, err := strconv.ParseFloat(a, 64)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%.17g\n", td.Quantile(q))
	}
}
