package temporal

import (
	"math"
	"strings"
	"time"
)

// Direction of an expression that names a time without saying which one:
// "on May 19", "in June", "on Friday", "the weekend", "on the 15th", "in the
// summer". Such an expression has one occurrence on each side of the moment
// it was said, and the sentence's tense says which it means:
//
//	"It's on May 19, so I have eleven weeks."     present → the next May 19
//	"I start on June 3."                          present → the next June 3
//	"We're getting married in June."              progressive → the next June
//	"I'll call you on Friday." / "going to" / "planning" / "can't wait"
//	"It was on May 19." / "I went in June." / "back in June" / "since May"
//	                                              past → the last one
//	"The Riverside race, May 19."                 no cue → the nearer one
//
// The cue is read from the clause that contains the expression, not from the
// whole turn: "I started training. It's on May 19" looks forward although the
// turn has a past verb, because a sentence boundary lies between them. Within
// the clause the cue nearest to the expression wins ("the photo I took of the
// race that is on May 19": "is"), looking left first on a tie. A weak cue
// ("until", "till", "by", "for" just before the expression: "tickets for June
// 3") counts only when the clause has no verb cue. With no cue at all the
// occurrence nearer to the reference day is taken, and an exact tie goes to
// the past: most of what people tell a memory about has happened.
//
// These are rules over words, deliberately simple and general: they know
// English tense and aspect, not any conversation.
type tense int8

const (
	tenseNone   tense = iota // no cue: the nearest occurrence
	tensePast                // the most recent occurrence not after the reference day
	tenseFuture              // the first occurrence not before the reference day
)

// maxCueDistance bounds how far (in tokens) a cue may be from the expression.
const maxCueDistance = 12

// tenseOf returns the direction the clause around toks[i:i+n] gives.
func (r *resolver) tenseOf(i, n int) tense {
	lo, hi := r.clause(i, n)
	for d := 1; d <= maxCueDistance; d++ {
		l, rt := i-d, i+n-1+d
		if l < lo && rt >= hi {
			break
		}
		if l >= lo {
			if c := r.cue(l); c != tenseNone {
				return c
			}
		}
		if rt < hi {
			if c := r.cue(rt); c != tenseNone {
				return c
			}
		}
	}
	return r.weakCue(i, lo)
}

// clause returns the token bounds [lo, hi) of the clause containing
// toks[i:i+n]. Clauses end at sentence punctuation (. ! ? ; :), at a dash
// written with spaces, and before a conjunction that opens a new clause
// ("…, so I have", "and we're", "because she", ", which is"). The search
// stops maxCueDistance tokens either side, so that a long text without
// punctuation costs linear time.
func (r *resolver) clause(i, n int) (lo, hi int) {
	lo = i
	for lo > 0 && lo > i-maxCueDistance && !r.clauseBreak(lo-1) && !r.opensClause(lo) {
		lo--
	}
	hi = i + n
	for hi < len(r.toks) && hi < i+n+maxCueDistance && !r.clauseBreak(hi) && !r.opensClause(hi) {
		hi++
	}
	return lo, hi
}

// clauseBreak reports whether toks[k] is punctuation ending a clause.
func (r *resolver) clauseBreak(k int) bool {
	t := r.toks[k]
	if t.kind != tPunct {
		return false
	}
	switch t.key {
	case ".", "!", "?", ";", ":", "…":
		return true
	case "-", "–", "—": // a spaced dash, not "mid-May"
		return (k == 0 || !r.adjacent(k-1, k)) && !r.adjacent(k, k+1)
	}
	return false
}

// clauseConjunctions open a new clause when a subject follows them.
var clauseConjunctions = map[string]bool{
	"so": true, "but": true, "and": true, "or": true, "because": true, "cause": true, "'cause": true,
	"although": true, "though": true, "while": true, "whereas": true, "then": true, "plus": true,
}

// relativeWords open a new clause after a comma: "the race, which is on May 19".
var relativeWords = map[string]bool{"which": true, "who": true, "where": true, "when": true}

// opensClause reports whether a new clause starts at toks[k].
func (r *resolver) opensClause(k int) bool {
	if k <= 0 || !r.isWord(k) {
		return false
	}
	w := r.toks[k].key
	if relativeWords[w] && r.isPunct(k-1, ",") {
		return true
	}
	return clauseConjunctions[w] && r.subjectAt(k+1)
}

// subjectAt reports whether toks[k] looks like the subject starting a clause:
// a personal pronoun (also contracted: "we're", "I'll") or a possessive.
func (r *resolver) subjectAt(k int) bool {
	if !r.isWord(k) {
		return false
	}
	w := r.toks[k].key
	if p, _, ok := strings.Cut(w, "'"); ok {
		w = p
	}
	switch w {
	case "i", "we", "you", "he", "she", "it", "they", "there", "my", "our", "your", "his", "her", "their":
		return true
	}
	return false
}

// futureWords look forward wherever they are.
var futureWords = map[string]bool{
	"will": true, "shall": true, "gonna": true, "gotta": true, "plan": true, "plans": true,
	"planning": true, "hope": true, "hoping": true, "hopefully": true, "wanna": true, "want": true,
	"wants": true, "intend": true, "intends": true, "upcoming": true, "soon": true, "tomorrow": true,
	"scheduled": true, "expecting": true, "won't": true, "forward": true, "next": true, "let's": true,
	"works": true, "sound": true, "sounds": true, "available": true, "would": true, "wouldn't": true,
	"might": true, "must": true, "should": true, "can": true, "can't": true, "cannot": true,
	"be": true, "do": true, "does": true, "don't": true, "doesn't": true,
	// present tense of "be": a dated statement in the present is a plan
	// ("the wedding is on June 15", "I'm off to Ireland in June").
	"am": true, "is": true, "are": true, "isn't": true, "aren't": true, "ain't": true,
	"i'm": true, "we're": true, "you're": true, "they're": true,
}

// pastWords look back wherever they are: past forms of "be", "do" and
// "have", common irregular past tenses and participles, and deictic words of
// the past. Regular past tenses ("started", "moved") are recognised by their
// "-ed" ending (see pastEd).
var pastWords = map[string]bool{
	"was": true, "were": true, "wasn't": true, "weren't": true, "did": true, "didn't": true,
	"had": true, "hadn't": true, "haven't": true, "hasn't": true, "couldn't": true, "been": true,
	"ago": true, "yesterday": true, "last": true, "previously": true, "since": true, "earlier": true,
	"remember": true, "recall": true, "reminds": true, "memories": true, "memory": true,
	"ate": true, "became": true, "began": true, "bent": true, "bit": true, "bled": true, "blew": true,
	"bought": true, "bred": true, "brought": true, "broke": true, "built": true, "burnt": true,
	"came": true, "caught": true, "chose": true, "dealt": true, "done": true, "drank": true,
	"drew": true, "drove": true, "dug": true, "fed": true, "fell": true, "felt": true, "fled": true,
	"flew": true, "forgot": true, "fought": true, "found": true, "froze": true, "gave": true,
	"gone": true, "gotten": true, "grew": true, "heard": true, "held": true, "hid": true,
	"hung": true, "kept": true, "knew": true, "laid": true, "led": true, "left": true, "lent": true,
	"lit": true, "lost": true, "made": true, "meant": true, "met": true, "overcame": true,
	"paid": true, "ran": true, "rang": true, "rode": true, "rose": true, "said": true, "sang": true,
	"sank": true, "sat": true, "saw": true, "seen": true, "sent": true, "shook": true, "shot": true,
	"slept": true, "slid": true, "sold": true, "spent": true, "spoke": true, "stood": true,
	"stole": true, "struck": true, "stuck": true, "swam": true, "swept": true, "swore": true,
	"taught": true, "thought": true, "threw": true, "told": true, "took": true, "tore": true,
	"understood": true, "went": true, "woke": true, "won": true, "wore": true, "wrote": true,
}

// eventVerbs are verbs of scheduled events whose simple present means a
// plan: "I start on June 3", "the race starts at nine on Sunday".
var eventVerbs = map[string]bool{
	"start": true, "starts": true, "begin": true, "begins": true, "ends": true, "finish": true,
	"finishes": true, "leave": true, "leaves": true, "fly": true, "flies": true, "arrive": true,
	"arrives": true, "returns": true, "opens": true, "closes": true, "launch": true, "launches": true,
	"depart": true, "departs": true, "graduate": true, "graduates": true, "lands": true, "come": true,
	"comes": true, "due": true, "happens": true, "kicks": true,
	// -ing forms that announce a move: "a kid starting college in the fall".
	"starting": true, "leaving": true, "coming": true, "moving": true, "flying": true,
	"heading": true, "arriving": true, "graduating": true,
}

// edAdjectives end in "-ed" but describe a state, not a past event ("I'm so
// excited for June"); nonVerbsEd end in "-ed" and are not verbs at all.
var (
	edAdjectives = map[string]bool{
		"excited": true, "interested": true, "thrilled": true, "worried": true, "tired": true,
		"bored": true, "scared": true, "stressed": true, "pleased": true, "delighted": true,
		"pumped": true, "stoked": true, "psyched": true, "obsessed": true, "overwhelmed": true,
		"relieved": true, "supposed": true, "engaged": true, "booked": true, "prepared": true,
		"determined": true, "committed": true, "dedicated": true, "blessed": true, "scheduled": true,
	}
	nonVerbsEd = map[string]bool{
		"hundred": true, "kindred": true, "sacred": true, "naked": true, "wicked": true,
		"crooked": true, "beloved": true, "rugged": true, "ragged": true, "jagged": true,
		"wretched": true, "embed": true, "infrared": true, "seabed": true, "flatbed": true,
		"sunbed": true, "bobsled": true, "biped": true,
	}
)

// stateBefore are words after which an "-ed" form is an adjective or a
// passive, not a past tense: "is scheduled", "getting married", "so tired",
// "the planned trip".
var stateBefore = map[string]bool{
	"am": true, "is": true, "are": true, "be": true, "i'm": true, "we're": true, "you're": true,
	"they're": true, "get": true, "gets": true, "getting": true, "so": true, "very": true,
	"really": true, "too": true, "super": true, "pretty": true, "more": true, "most": true,
	"feel": true, "feeling": true, "a": true, "an": true, "the": true, "my": true, "our": true,
	"your": true, "his": true, "her": true, "their": true,
}

// cliticIs are words whose contracted "'s" is "is" (or "has"): "it's",
// "that's", "she's". A possessive "Melanie's" says nothing about tense.
var cliticIs = map[string]bool{
	"it": true, "that": true, "there": true, "here": true, "what": true, "who": true, "where": true,
	"when": true, "how": true, "he": true, "she": true, "everything": true, "everyone": true,
	"nothing": true, "something": true, "this": true, "which": true,
}

// cue classifies toks[k] as a tense cue.
func (r *resolver) cue(k int) tense {
	t := r.toks[k]
	if t.kind != tWord {
		return tenseNone
	}
	w, next, prev := t.key, r.key(k+1), r.key(k-1)
	if bareVerbs[w] && r.didBefore(k) {
		return tensePast // "what did you do on Friday?", "did you have fun on Saturday?"
	}
	switch {
	case t.clitic && cliticIs[w]: // "it's on May 19"; "it's been" is perfect
		if next == "been" {
			return tensePast
		}
		return tenseFuture
	case strings.HasSuffix(w, "'ve"): // "I've been", "we've done"; "I've got" is possession
		if next == "got" || next == "gotta" {
			return tenseFuture
		}
		return tensePast
	case strings.HasSuffix(w, "'d"): // "I'd love to" (would) or "I'd been" (had)
		if next == "been" || next == "had" || r.pastEd(k+1) {
			return tensePast
		}
		return tenseFuture
	case strings.HasSuffix(w, "'ll"):
		return tenseFuture
	}
	switch w {
	case "have", "has": // "I have a race on May 19", "have to"; "have (you) been" is perfect
		for _, j := range []int{k + 1, k + 2} {
			if nk := r.key(j); nk == "been" || nk == "had" || pastWords[nk] || r.pastEd(j) {
				return tensePast
			}
		}
		return tenseFuture
	case "got": // "I got married", but "I have got", "she's got"
		if prev == "have" || prev == "has" || strings.HasSuffix(prev, "'ve") || r.isClitic(k-1) {
			return tenseFuture
		}
		return tensePast
	case "going": // "I'm going to", "we're going camping"
		if beWords[prev] || r.isClitic(k-1) {
			return tenseFuture
		}
		return tenseNone
	case "wait": // "can't wait for the weekend"
		if prev == "can't" || prev == "cannot" || prev == "cant" {
			return tenseFuture
		}
		return tenseNone
	case "see": // "see you on Friday"
		if next == "you" || next == "ya" {
			return tenseFuture
		}
		return tenseNone
	case "back": // "back in June", but "I'll be back in June", "go back in June"
		if n := next; n == "in" || n == "on" || n == "during" || n == "when" || n == "then" {
			if returnVerbs[prev] {
				return tenseNone
			}
			return tensePast
		}
		return tenseNone
	case "in": // "in two weeks"
		if _, _, _, c, _ := r.countUnit(k + 1); c > 0 && r.key(k+1+c) != "ago" {
			return tenseFuture
		}
		return tenseNone
	case "from": // "three days from now"
		if next == "now" {
			return tenseFuture
		}
		return tenseNone
	case "remember": // "remember to call on Friday" is an instruction
		if next == "to" {
			return tenseFuture
		}
		return tensePast
	}
	if futureWords[w] {
		return tenseFuture
	}
	if pastWords[w] {
		return tensePast
	}
	if eventVerbs[w] {
		switch {
		case prev == "to" || w == "due" && next == "to":
			return tenseNone // "I wanted to start in June": the governing verb decides; "due to"
		}
		return tenseFuture
	}
	if r.pastEd(k) {
		return tensePast
	}
	return tenseNone
}

// bareVerbs are verb forms that read as present or future on their own but
// as past after "did": "did you have fun", "when did you start".
var bareVerbs = map[string]bool{
	"have": true, "do": true, "be": true, "see": true, "want": true, "start": true, "begin": true,
	"finish": true, "leave": true, "fly": true, "arrive": true, "launch": true, "depart": true,
	"graduate": true, "come": true,
}

// didBefore reports whether "did" or "didn't" stands up to three words
// before toks[k] in the same clause: "did you guys have".
func (r *resolver) didBefore(k int) bool {
	for j := k - 1; j >= 0 && j >= k-3; j-- {
		if r.clauseBreak(j) {
			return false
		}
		if w := r.key(j); w == "did" || w == "didn't" {
			return true
		}
	}
	return false
}

// beWords may precede "going" in "… going to": forms of "be" and subjects
// whose "be" was dropped ("we going to the zoo").
var beWords = map[string]bool{
	"am": true, "is": true, "are": true, "be": true, "i'm": true, "we're": true, "you're": true,
	"they're": true, "he": true, "she": true, "it": true, "we": true, "i": true, "they": true, "you": true,
}

// returnVerbs before "back in" make it a return, not a look back.
var returnVerbs = map[string]bool{
	"be": true, "come": true, "coming": true, "go": true, "going": true, "get": true,
	"getting": true, "fly": true, "flying": true, "move": true, "moving": true, "head": true,
	"heading": true, "i'm": true, "we're": true, "you're": true, "they're": true, "is": true,
	"are": true, "am": true,
}

// isClitic reports whether toks[k] lost a contracted "'s" that means "is"
// or "has" ("she's", "it's").
func (r *resolver) isClitic(k int) bool {
	return k >= 0 && k < len(r.toks) && r.toks[k].clitic && cliticIs[r.toks[k].key]
}

// pastEd reports whether toks[k] is a regular past tense or participle: a
// lower-case word of four letters or more ending in "-ed" that is not a
// non-verb ("hundred"), not "-eed" ("need", "speed"), not a state adjective
// ("excited") and not after a word that makes it one ("is scheduled",
// "getting married", "the planned trip").
func (r *resolver) pastEd(k int) bool {
	if !r.isWord(k) {
		return false
	}
	t := r.toks[k]
	w := t.key
	if len(w) < 4 || !strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "eed") {
		return false
	}
	if nonVerbsEd[w] || edAdjectives[w] || stateBefore[r.key(k-1)] || r.isClitic(k-1) {
		return false
	}
	// A capitalised word inside a sentence is a name ("Ahmed").
	if t.cap && k > 0 && !r.clauseBreak(k-1) {
		return false
	}
	return true
}

// weakCue returns tenseFuture when the expression at toks[i] follows
// "until", "till", "by" or "for" (skipping "on", "the", "in"): "tickets for
// June 3", "numbers on my desk by Tuesday". It is consulted only when the
// clause has no other cue.
func (r *resolver) weakCue(i, lo int) tense {
	k := i - 1
	for steps := 0; k >= lo && steps < 3 && skipBeforeDate[r.key(k)]; steps++ {
		k--
	}
	switch r.key(k) {
	case "until", "till", "til", "by", "for":
		if k >= lo {
			return tenseFuture
		}
	}
	return tenseNone
}

// skipBeforeDate are the words weakCue looks past.
var skipBeforeDate = map[string]bool{"on": true, "the": true, "in": true, "of": true}

// choose returns the candidate occurrence (cands in chronological order) the
// direction asks for: for tensePast the latest one starting on or before the
// reference day, for tenseFuture the first one ending after its start, and
// for tenseNone the one nearest to the reference day, the earlier on a tie.
// Intervals containing the reference day are both the latest past and the
// first future occurrence ("in May" said in May is this May).
func (r *resolver) choose(cands []Interval, t tense) (Interval, bool) {
	var best Interval
	found := false
	bestDist := math.MaxInt
	for _, c := range cands {
		switch t {
		case tensePast:
			if !c.Start.After(r.day) {
				best, found = c, true
			}
		case tenseFuture:
			if !found && c.End.After(r.day) {
				best, found = c, true
			}
		default:
			if d := r.distance(c); d < bestDist {
				best, found, bestDist = c, true, d
			}
		}
	}
	return best, found
}

// distance is the number of days from the reference day to the nearest day
// of c (0 when c contains it).
func (r *resolver) distance(c Interval) int {
	days := func(a, b time.Time) int { return int(math.Round(b.Sub(a).Hours() / 24)) }
	switch {
	case c.Start.After(r.day):
		return days(r.day, c.Start)
	case !c.End.After(r.day):
		return days(addDays(c.End, -1), r.day)
	}
	return 0
}
