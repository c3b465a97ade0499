package minilm

import (
	"context"
	"github.com/higmem/higmem/internal/cputime"
	"math/rand/v2"
	"strings"
	"testing"
)

// locomoLikeTurns builds n chat turns of 20–40 words in the style of LoCoMo
// dialogues, deterministically.
func locomoLikeTurns(n int) []string {
	words := strings.Fields(`hey mel good to see you how have you been i went to a support group
		yesterday and it was so powerful wow that's cool caroline what happened that was so awesome
		did you hear any inspiring stories the transgender stories were so inspiring i was so happy
		and thankful for all the support love that painting so cool you found such a helpful group
		what's it done for you we went camping with the kids last weekend and roasted marshmallows
		by the lake my daughter painted a sunset at her art class i'm thinking about adopting a dog
		from the shelter next month after my counseling certification exam in june`)
	r := rand.New(rand.NewPCG(4, 4))
	turns := make([]string, n)
	for i := range turns {
		k := 20 + r.IntN(21)
		var b strings.Builder
		for j := 0; j < k; j++ {
			if j > 0 {
				b.WriteByte(' ')
			}
			w := words[r.IntN(len(words))]
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			if r.IntN(8) == 0 {
				b.WriteString([]string{",", "!", "?", "."}[r.IntN(4)])
			}
		}
		turns[i] = b.String()
	}
	return turns
}

// BenchmarkEmbed embeds batches of 64 LoCoMo-like turns with all
// GOMAXPROCS workers and reports turns/s.
func BenchmarkEmbed(b *testing.B) {
	m := loadTestModel(b)
	turns := locomoLikeTurns(64)
	ctx := context.Background()
	var tokens int
	for _, t := range turns {
		tokens += len(m.Tokenizer().Encode(t))
	}
	cpu0 := cputime.Process()
	for b.Loop() {
		if _, err := m.Embed(ctx, turns); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N * len(turns))
	b.ReportMetric(n/b.Elapsed().Seconds(), "turns/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(cpu.Seconds()*1000/n, "cpu-ms/turn")
	}
	b.ReportMetric(float64(tokens)/float64(len(turns)), "tokens/turn")
}

// BenchmarkEmbedOne embeds one turn at a time on one goroutine (latency),
// with each available kernel variant.
func BenchmarkEmbedOne(b *testing.B) {
	m := loadTestModel(b)
	turns := locomoLikeTurns(16)
	ctx := context.Background()
	saved2, saved512, savedVNNI := useAVX2, useAVX512, useVNNI
	defer func() { useAVX2, useAVX512, useVNNI = saved2, saved512, savedVNNI }()
	for _, v := range []struct {
		name               string
		avx2, avx512, vnni bool
	}{{"vnni", true, true, true}, {"avx512", true, true, false}, {"avx2", true, false, false}, {"go", false, false, false}} {
		if v.avx2 && !saved2 || v.avx512 && !saved512 || v.vnni && !savedVNNI {
			continue
		}
		useAVX2, useAVX512, useVNNI = v.avx2, v.avx512, v.vnni
		b.Run(v.name, func(b *testing.B) {
			i := 0
			cpu0 := cputime.Process()
			for b.Loop() {
				if _, err := m.Embed(ctx, turns[i%len(turns):i%len(turns)+1]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/turn")
			}
		})
	}
}

// BenchmarkLoad measures Load (safetensors read, weight packing).
func BenchmarkLoad(b *testing.B) {
	dir := testModelDir(b)
	for b.Loop() {
		if _, err := Load(dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
