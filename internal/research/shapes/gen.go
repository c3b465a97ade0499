package shapes

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"

	"github.com/higmem/higmem/eval/locomo"
)

// The generators write LoCoMo-format files (conversation with speaker_a,
// speaker_b, session_N and session_N_date_time; qa with question, answer,
// evidence, category) made from a dev file's facts.

type fileTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
}

type fileQA struct {
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

type fileSample struct {
	ID           string         `json:"sample_id"`
	Conversation map[string]any `json:"conversation"`
	QA           []fileQA       `json:"qa"`
}

// assistantBank is what a synthetic assistant says around a user's fact:
// generic elaboration, advice and follow-ups, as chat assistants write.
var assistantBank = []string{
	"That is a wonderful thing to share, and it says a lot about what matters to you right now.",
	"It is completely normal to feel a mix of excitement and uncertainty in a situation like this.",
	"Here are a few ideas that might help you make the most of it over the coming weeks.",
	"First, try to set aside a little time each day to reflect on how things are going and what you have learned.",
	"Second, consider writing down your goals so that you can come back to them when things get busy.",
	"Third, do not hesitate to reach out to friends, family or a community that shares your interests.",
	"Many people find that small, consistent steps make a bigger difference than occasional big efforts.",
	"If you want, I can put together a simple plan or a checklist tailored to your schedule.",
	"It might also help to think about what success would look like for you in a month or two.",
	"Remember to take care of yourself along the way: rest, good food and some time outdoors all help.",
	"Would you like some book, podcast or course recommendations on this topic?",
	"You could also keep a journal, which many people find useful for noticing patterns and progress.",
	"Balancing this with work and other commitments can be tricky, so be kind to yourself if things slip.",
	"Sharing your experience with others can be rewarding, and it often inspires them too.",
	"Let me know how it goes, and feel free to ask if you want to go deeper into any of these points.",
	"Another thing to keep in mind is that motivation comes and goes, while habits carry you through.",
	"If budget is a concern, there are often free local groups, library events or online resources.",
	"Setting a regular time for it, like a weekend morning, can make it easier to stick with.",
	"It is great that you are open to new experiences; that curiosity will serve you well.",
	"Think about who else might enjoy joining you; doing things together is often more fun.",
}

var contentWord = regexp.MustCompile(`[A-Za-z][A-Za-z'-]{3,}`)

// assistantReply returns a long synthetic reply to a user message: an
// echo of its words, two to four sentences said by the other speaker of
// the source conversation nearby (topical distractors), and generic
// elaboration, words words or so.
func assistantReply(r *rand.Rand, user string, nearby []string, words int) string {
	var b []string
	ws := contentWord.FindAllString(user, -1)
	if len(ws) > 6 {
		ws = ws[:6]
	}
	if len(ws) > 0 {
		b = append(b, "Thanks for telling me about "+strings.ToLower(strings.Join(ws, " "))+".")
	}
	for _, k := range r.Perm(len(nearby))[:min(len(nearby), 2+r.IntN(3))] {
		b = append(b, nearby[k])
	}
	n := 0
	for _, s := range b {
		n += len(strings.Fields(s))
	}
	for n < words {
		s := assistantBank[r.IntN(len(assistantBank))]
		b = append(b, s)
		n += len(strings.Fields(s))
	}
	return strings.Join(b, " ")
}

// GenUA writes a synthetic user–assistant stress: in each conversation of
// src, speaker_a becomes the user, whose turns are kept as they are (short
// statements holding the facts), and every one of them is answered by a
// long assistant reply (about replyWords words) made of an echo of it, a
// few of speaker_b's nearby turns and generic elaboration; speaker_b's
// turns are otherwise dropped. The questions kept are those whose evidence
// is all speaker_a's, their evidence renumbered. convs limits how many
// conversations (0: all).
func GenUA(src []locomo.Sample, out string, convs, replyWords int, seed uint64) (int, error) {
	r := rand.New(rand.NewPCG(seed, 1))
	var samples []fileSample
	nq := 0
	for si, s := range src {
		if convs > 0 && si >= convs {
			break
		}
		conv := map[string]any{"speaker_a": "User", "speaker_b": "Assistant"}
		newID := map[string]string{}
		for _, sess := range s.Sessions {
			var turns []fileTurn
			var others []string
			for _, t := range sess.Turns {
				if t.Speaker != s.SpeakerA {
					others = append(others, t.Content())
				}
			}
			for _, t := range sess.Turns {
				if t.Speaker != s.SpeakerA {
					continue
				}
				id := fmt.Sprintf("D%d:%d", sess.N, len(turns)+1)
				newID[t.DiaID] = id
				turns = append(turns, fileTurn{"User", id, t.Content()})
				reply := assistantReply(r, t.Content(), others, replyWords/2+r.IntN(replyWords))
				turns = append(turns, fileTurn{"Assistant", fmt.Sprintf("D%d:%d", sess.N, len(turns)+1), reply})
			}
			conv[fmt.Sprintf("session_%d", sess.N)] = turns
			conv[fmt.Sprintf("session_%d_date_time", sess.N)] = sess.DateTime
		}
		fs := fileSample{ID: s.ID + "-ua", Conversation: conv}
		for _, qa := range s.QA {
			if qa.Category == 5 || len(qa.Evidence) == 0 {
				continue
			}
			var ev []string
			for _, e := range qa.Evidence {
				if id, ok := newID[e]; ok {
					ev = append(ev, id)
				}
			}
			if len(ev) != len(qa.Evidence) {
				continue
			}
			fs.QA = append(fs.QA, fileQA{qa.Question, qa.Answer, ev, qa.Category})
		}
		nq += len(fs.QA)
		samples = append(samples, fs)
	}
	return nq, write(out, samples)
}

var sentenceEnd = regexp.MustCompile(`[.!?]+\s+`)

// GenBurst writes the burst stress: every turn of src cut into its
// sentences, each sent as its own message (a burst of the turn's speaker);
// a question's evidence is, for each evidence turn, the message sharing
// most words with the answer (the first one when none does).
func GenBurst(src []locomo.Sample, out string, convs int) (int, error) {
	var samples []fileSample
	nq := 0
	for si, s := range src {
		if convs > 0 && si >= convs {
			break
		}
		conv := map[string]any{"speaker_a": s.SpeakerA, "speaker_b": s.SpeakerB}
		pieces := map[string][]fileTurn{}
		for _, sess := range s.Sessions {
			var turns []fileTurn
			for _, t := range sess.Turns {
				for _, p := range splitSentences(t.Content()) {
					ft := fileTurn{t.Speaker, fmt.Sprintf("D%d:%d", sess.N, len(turns)+1), p}
					turns = append(turns, ft)
					pieces[t.DiaID] = append(pieces[t.DiaID], ft)
				}
			}
			conv[fmt.Sprintf("session_%d", sess.N)] = turns
			conv[fmt.Sprintf("session_%d_date_time", sess.N)] = sess.DateTime
		}
		fs := fileSample{ID: s.ID + "-burst", Conversation: conv}
		for _, qa := range s.QA {
			if qa.Category == 5 || len(qa.Evidence) == 0 {
				continue
			}
			var ev []string
			for _, e := range qa.Evidence {
				ps := pieces[e]
				if len(ps) == 0 {
					continue
				}
				best, bo := 0, -1
				for k, p := range ps {
					if o := overlap(p.Text, qa.Answer+" "+qa.Question); o > bo {
						best, bo = k, o
					}
				}
				ev = append(ev, ps[best].DiaID)
			}
			if len(ev) == 0 {
				continue
			}
			fs.QA = append(fs.QA, fileQA{qa.Question, qa.Answer, ev, qa.Category})
		}
		nq += len(fs.QA)
		samples = append(samples, fs)
	}
	return nq, write(out, samples)
}

func splitSentences(text string) []string {
	idx := sentenceEnd.FindAllStringIndex(text, -1)
	var out []string
	start := 0
	for _, m := range idx {
		if s := strings.TrimSpace(text[start:m[1]]); s != "" {
			out = append(out, s)
		}
		start = m[1]
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

func overlap(a, b string) int {
	bw := map[string]bool{}
	for _, w := range contentWord.FindAllString(strings.ToLower(b), -1) {
		bw[w] = true
	}
	n := 0
	for _, w := range contentWord.FindAllString(strings.ToLower(a), -1) {
		if bw[w] {
			n++
		}
	}
	return n
}

func write(path string, samples []fileSample) error {
	b, err := json.MarshalIndent(samples, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
