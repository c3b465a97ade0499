// Package synth generates synthetic conversations for benchmarks: two
// speakers, dated sessions, and turns recombined from a small built-in
// phrase bank (or from a corpus of real turns the caller supplies), so that
// lexical and dense search see realistic word statistics. Output is fully
// determined by the seed.
package synth

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/higmem/higmem"
)

// Options configures Generate.
type Options struct {
	// Turns is how many turns to generate.
	Turns int
	// Seed makes the output reproducible.
	Seed uint64
	// SessionTurns is the mean session length (default 20).
	SessionTurns int
	// Corpus, when non-empty, supplies turn texts to recombine instead of
	// the built-in phrase bank (e.g. LoCoMo turns read at run time).
	Corpus []string
	// Start is the date of the first session (default 2023-01-02).
	Start time.Time
	// Shape is the form of the conversation: "" (or "chat") two people
	// taking turns with messages of one length; "ua" a user–assistant
	// chat, a user's short messages each answered by a long reply (five
	// sentences), the shape whose weights offline retrieval adapts to
	// (offline.Tuning.Adapt), which only its exact path scores.
	Shape string
}

// ShapeUA is Options.Shape of a user–assistant chat.
const ShapeUA = "ua"

// Conversation is a generated conversation with questions whose evidence
// turn is known.
type Conversation struct {
	Turns     []higmem.TurnInput
	Questions []Question
}

// Question is a generated question and the id of the turn that answers it.
type Question struct {
	Text     string
	Evidence string
}

var (
	names    = []string{"Ava", "Ben"}
	uaNames  = []string{"user", "assistant"}
	people   = []string{"my sister", "my brother", "my mum", "my dad", "our neighbour", "my best friend", "my boss", "a colleague", "my cousin", "the kids"}
	places   = []string{"the lake", "Lisbon", "the farmers market", "the climbing gym", "the library", "Kyoto", "the beach", "the museum", "a pottery studio", "the park", "the hospital", "Berlin", "the mountains", "a jazz bar", "the bakery", "the shelter"}
	things   = []string{"a sunset painting", "sourdough bread", "a blue ceramic bowl", "a vintage guitar", "running shoes", "a photo album", "a tomato garden", "a wooden bookshelf", "a knitted scarf", "a chess set", "a telescope", "a road bike", "a recipe book", "a puzzle", "a kite", "a camera"}
	hobbies  = []string{"painting", "pottery", "running", "climbing", "baking", "birdwatching", "chess", "yoga", "cycling", "gardening", "photography", "knitting", "swimming", "hiking", "guitar", "volunteering"}
	feelings = []string{"it was amazing", "I felt so proud", "it was exhausting but fun", "I was really nervous", "it made me so happy", "I learned a lot", "it was a bit chaotic", "I can't wait to do it again"}
	whens    = []string{"yesterday", "last week", "last weekend", "two days ago", "this morning", "last month", "on Friday", "a few weeks ago"}
	replies  = []string{"Wow, that sounds wonderful!", "That's so cool, tell me more.", "Haha, I love that.", "How did that go?", "I'm so happy for you!", "That must have been hard.", "Nice! Send me a picture.", "Oh really? I had no idea."}
)

// templates build statements; %[1]s person, %[2]s place, %[3]s thing,
// %[4]s hobby, %[5]s feeling, %[6]s when.
var templates = []string{
	"I went to %[2]s with %[1]s %[6]s and %[5]s.",
	"%[6]s I finally finished %[3]s, %[5]s.",
	"I've been getting into %[4]s lately; %[1]s got me started.",
	"We took %[1]s to %[2]s %[6]s to try %[4]s.",
	"I bought %[3]s at %[2]s %[6]s.",
	"My %[4]s class at %[2]s starts again next month.",
	"%[1]s gave me %[3]s for my birthday and %[5]s.",
	"I've been doing %[4]s for three years now, it keeps me sane.",
	"Guess what, I signed up for a %[4]s workshop in %[2]s!",
	"%[6]s I lost %[3]s somewhere near %[2]s.",
}

// Generate returns a conversation of opts.Turns turns and one question per
// 20 turns.
func Generate(opts Options) Conversation {
	if opts.SessionTurns <= 0 {
		opts.SessionTurns = 20
	}
	if opts.Start.IsZero() {
		opts.Start = time.Date(2023, 1, 2, 10, 0, 0, 0, time.UTC)
	}
	r := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	var c Conversation
	session, inSession := 1, 0
	day := opts.Start
	sessionLen := opts.SessionTurns/2 + r.IntN(opts.SessionTurns+1)
	for i := range opts.Turns {
		if inSession >= sessionLen {
			session++
			inSession = 0
			day = day.Add(time.Duration(2+r.IntN(10)) * 24 * time.Hour)
			sessionLen = opts.SessionTurns/2 + r.IntN(opts.SessionTurns+1)
		}
		speaker := names[i%2]
		var text string
		statement := func() string {
			return fmt.Sprintf(pick(templates), pick(people), pick(places), pick(things), pick(hobbies), pick(feelings), pick(whens))
		}
		switch {
		case opts.Shape == ShapeUA:
			speaker = uaNames[i%2]
			text = statement()
			if i%2 == 1 { // the assistant's reply
				text = pick(replies) + " " + statement() + " " + statement() + " " + statement() + " " + statement()
			}
		case len(opts.Corpus) > 0:
			text = opts.Corpus[r.IntN(len(opts.Corpus))]
		case inSession > 0 && r.IntN(3) == 0:
			text = pick(replies)
		default:
			text = statement()
		}
		id := "D" + strconv.Itoa(session) + ":" + strconv.Itoa(inSession+1)
		at := day.Add(time.Duration(inSession) * time.Minute)
		c.Turns = append(c.Turns, higmem.TurnInput{
			ID: id, SessionID: strconv.Itoa(session), Speaker: speaker, Text: text, Time: at.Format(time.RFC3339),
		})
		if i%20 == 5 && len(opts.Corpus) == 0 && !strings.HasSuffix(text, "?") {
			c.Questions = append(c.Questions, Question{Text: "What did " + speaker + " say about " + lastWords(text) + "?", Evidence: id})
		}
		inSession++
	}
	return c
}

// lastWords returns the last three words of s without punctuation.
func lastWords(s string) string {
	f := strings.Fields(strings.Trim(s, ".!?,;"))
	if len(f) > 3 {
		f = f[len(f)-3:]
	}
	return strings.Join(f, " ")
}
