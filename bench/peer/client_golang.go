// The peer benchmark: Go's client_golang (Debian's package) formatting the
// same 1,000,000 series with 3 labels that bench_writer.c formats, on one core.
package main

import (
	"bytes"
	"fmt"
	"runtime"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

const series = 1000000
const perFamily = 1000
const rounds = 5

func families() []*dto.MetricFamily {
	var out []*dto.MetricFamily
	var mf *dto.MetricFamily
	for i := 0; i < series; i++ {
		if i%perFamily == 0 {
			mf = &dto.MetricFamily{
				Name: proto.String(fmt.Sprintf("bench_family_%d_bytes", i/perFamily)),
				Help: proto.String("Benchmark series."),
				Type: dto.MetricType_GAUGE.Enum(),
			}
			out = append(out, mf)
		}
		v := float64(i) / 8.0
		if i&1 == 1 {
			v = float64(i * 4096)
		}
		mf.Metric = append(mf.Metric, &dto.Metric{
			Label: []*dto.LabelPair{
				{Name: proto.String("instance"), Value: proto.String(fmt.Sprintf("host-%d", i%97))},
				{Name: proto.String("device"), Value: proto.String(fmt.Sprintf("dev%d", i))},
				{Name: proto.String("mode"), Value: proto.String("user")},
			},
			Gauge: &dto.Gauge{Value: proto.Float64(v)},
		})
	}
	return out
}

func main() {
	runtime.GOMAXPROCS(1)
	mfs := families()
	var buf bytes.Buffer
	for _, format := range []string{"text 0.0.4", "OpenMetrics"} {
		times := make([]float64, rounds)
		for r := 0; r < rounds; r++ {
			buf.Reset()
			t0 := time.Now()
			for _, mf := range mfs {
				if format == "text 0.0.4" {
					expfmt.MetricFamilyToText(&buf, mf)
				} else {
					expfmt.MetricFamilyToOpenMetrics(&buf, mf)
				}
			}
			times[r] = time.Since(t0).Seconds()
		}
		sort.Float64s(times)
		fmt.Printf("peer   client_golang %-12s %d series x 3 labels: median %.3f s = %.2f M series/s (best %.2f M/s), %.1f MB\n",
			format, series, times[rounds/2], series/times[rounds/2]/1e6, series/times[0]/1e6, float64(buf.Len())/1e6)
	}
}
