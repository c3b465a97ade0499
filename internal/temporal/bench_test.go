package temporal

import (
	"strings"
	"testing"
)

const benchTurn = "Hey Mel! Since we last spoke, I went to an LGBTQ conference two days ago and last Friday I ran a charity race. Next month I'm having an art show, and I've been painting since 2016."

func BenchmarkParseTimeLoCoMo(b *testing.B) {
	for b.Loop() {
		if _, _, err := ParseTime("10:37 am on 27 June, 2023", nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResolveTurn(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Resolve(benchTurn, locomoRef)
	}
}

func BenchmarkResolveLong(b *testing.B) {
	long := strings.Repeat(benchTurn+" ", 200)
	b.SetBytes(int64(len(long)))
	for b.Loop() {
		Resolve(long, locomoRef)
	}
}

func BenchmarkAnalyzeQuestion(b *testing.B) {
	for b.Loop() {
		AnalyzeQuestion("How many pets did Andrew have, as of September 2023?")
	}
}

// BenchmarkResolveUndirected resolves a turn full of dates without a year,
// each of which reads its clause's tense.
func BenchmarkResolveUndirected(b *testing.B) {
	const turn = "It's on May 19, so I have eleven weeks. I went to Porto in June and we're getting married in August. " +
		"See you on Friday! What did you do over the weekend? We met on the 15th, back in the summer."
	b.ReportAllocs()
	for b.Loop() {
		Resolve(turn, locomoRef)
	}
}
