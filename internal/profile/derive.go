package profile

import (
	"regexp"
	"strings"
)

// turn applies the rules to every sentence of t.
func (d *deriver) turn(t Turn) {
	if strings.TrimSpace(t.Speaker) == "" {
		return
	}
	sp := d.entity(t.Speaker, true)
	ss := sentences(t.Text)
	for k, s := range ss {
		c := &sentenceCtx{d: d, speaker: sp, t: t, text: s, lower: strings.ToLower(s)}
		for _, ru := range firstPerson {
			c.apply(ru, s)
		}
		c.namedPeople(s)
		if k+1 < len(ss) {
			c.adoptedThenNamed(s, ss[k+1])
		}
	}
}

// adoptRe is a new pet without its name: "I adopted a dog two days ago".
var adoptRe = regexp.MustCompile(`\b(?i:i|we)(?i:'ve|\s+have)?(?:\s+(?i:just|finally|recently))?\s+(?i:adopted|got|rescued|brought home)\s+(?i:a|an)\s+(?:(?i:new|little|sweet|rescue)\s+)*` + kind + `\b`)

// namedRe gives the name in the next sentence: "A three-year-old
// greyhound called Biscuit", "His name is Biscuit".
var namedRe = regexp.MustCompile(`^(?:(?i:an?|the)\s+)?(?:[\w-]+\s+){0,3}?(?:` + kind + `\s+(?i:named|called)|(?i:his|her|its|the)\s+(?i:name)\s+(?i:is))\s+` + name + `\b`)

// adoptedThenNamed reads a new pet told in two sentences of one turn.
func (c *sentenceCtx) adoptedThenNamed(s, next string) {
	m := adoptRe.FindStringSubmatchIndex(s)
	if m == nil || hedged(s[:m[0]]) {
		return
	}
	if g := namedRe.FindStringSubmatch(next); g != nil {
		c.setPet(c.speaker, s[m[2]:m[3]], g[2])
	}
}

// apply runs one rule on text (a sentence or the part of it after a name)
// for c.speaker, for every match that is not hedged.
func (c *sentenceCtx) apply(ru rule, text string) {
	if !c.needs(ru) {
		return
	}
	for _, loc := range ru.re.FindAllStringSubmatchIndex(text, -1) {
		if hedged(text[:loc[0]]) {
			continue
		}
		g := make([]string, len(loc)/2)
		for k := range g {
			if loc[2*k] >= 0 {
				g[k] = text[loc[2*k]:loc[2*k+1]]
			}
		}
		ru.do(c, g)
	}
}

// needs reports whether the sentence contains one of the rule's needed
// strings.
func (c *sentenceCtx) needs(ru rule) bool {
	for _, n := range ru.need {
		if strings.Contains(c.lower, n) {
			return true
		}
	}
	return false
}

// namedPeople reads "my sister Ana ..." mentions: the person gets the
// relation, and what the rest of the sentence says of them.
func (c *sentenceCtx) namedPeople(s string) {
	if !c.needs(named) {
		return
	}
	for _, loc := range named.re.FindAllStringSubmatchIndex(s, -1) {
		if hedged(s[:loc[0]]) {
			continue
		}
		rel, nm := strings.ToLower(s[loc[2]:loc[3]]), s[loc[4]:loc[5]]
		n, ok := cleanName(nm)
		if !ok || Key(n) == Key(c.speaker.name) || strings.Contains(n, " ") {
			continue
		}
		p := c.d.entity(n, false)
		p.set(Relation, "", rel+" of "+c.speaker.name, c.t, true)
		sub := &sentenceCtx{d: c.d, speaker: p, t: c.t, text: s, lower: c.lower}
		for _, ru := range thirdPerson {
			sub.apply(ru, s[loc[1]:])
		}
	}
}

// hedge finds words before a match that make it no statement of fact.
var hedge = regexp.MustCompile(`(?i)\b(?:if|wish|unless|whether|imagine|pretend|dream(?:ed|ing)?|would|hypothetically|not like|suppose|pretending|said|says|told me)\b`)

func hedged(prefix string) bool { return hedge.MatchString(prefix) }

// sentenceEnd splits text into sentences.
var sentenceEnd = regexp.MustCompile(`[.!?]+(?:\s+|$)|;\s+|\n+|\s+-\s+`)

// sentences splits text into statements, dropping questions. Curly
// apostrophes become straight ones.
func sentences(text string) []string {
	text = strings.ReplaceAll(text, "’", "'")
	var out []string
	start := 0
	for _, loc := range sentenceEnd.FindAllStringIndex(text, -1) {
		s, end := text[start:loc[0]], text[loc[0]:loc[1]]
		start = loc[1]
		if strings.Contains(end, "?") {
			continue
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// setPlace sets a place attribute (Home, Hometown) of e; a move fulfils
// the plan to move there.
func (c *sentenceCtx) setPlace(e *entity, attr, raw string) {
	p, ok := cleanPlace(raw)
	if !ok {
		return
	}
	e.set(attr, "", p, c.t, true)
	if attr == Home {
		e.close(Plan, "", c.t, func(v string) bool { return same(v, "move to "+p) })
	}
}

// setJob sets e's job title and employer (either may be empty). A new job
// (fresh) at another employer, with no title given, ends the old title: it
// is no longer known.
func (c *sentenceCtx) setJob(e *entity, rawTitle, rawOrg string, fresh bool) {
	tt, okT := cleanTitle(rawTitle)
	o, okO := cleanName(rawOrg)
	if okT {
		e.set(Job, "", tt, c.t, true)
	}
	if okO {
		if fresh && !okT {
			cur := e.current(Employer, "")
			if len(cur) > 0 && !same(cur[0], o) {
				e.close(Job, "", c.t, nil)
			}
		}
		e.set(Employer, "", o, c.t, true)
	} else if fresh && okT {
		// A new job named only by its title: the old employer is
		// unknown now.
		e.close(Employer, "", c.t, nil)
	}
}

// petValue renders a pet.
func petValue(nm, kind string) string { return nm + " (" + kind + ")" }

// petName returns the name part of a pet value.
func petName(v string) string {
	if i := strings.Index(v, " ("); i >= 0 {
		return v[:i]
	}
	return v
}

// petKindOf returns the kind part of a pet value.
func petKindOf(v string) string {
	if i := strings.Index(v, " ("); i >= 0 {
		return strings.TrimSuffix(v[i+2:], ")")
	}
	return ""
}

func (c *sentenceCtx) setPet(e *entity, rawKind, rawName string) {
	n, ok := cleanName(rawName)
	if !ok || strings.Contains(n, " ") {
		return
	}
	if renameRe.MatchString(c.text) {
		return // "we renamed our cat Nova": the rename rule reads it
	}
	k := petKind(rawKind)
	// The same name with another kind is the same pet ("my puppy Max",
	// "my dog Max").
	for _, v := range e.current(Pet, "") {
		if same(petName(v), n) {
			e.set(Pet, "", v, c.t, false)
			return
		}
	}
	e.set(Pet, "", petValue(n, k), c.t, false)
}

// findPet returns the one current pet with the given name, or else the one
// of the given kind, or else the only pet; "" when that is not one pet.
func findPet(e *entity, rawKind, rawName string) string {
	cur := e.current(Pet, "")
	if n, ok := cleanName(rawName); ok {
		for _, v := range cur {
			if same(petName(v), n) {
				return v
			}
		}
		return ""
	}
	var match []string
	for _, v := range cur {
		if rawKind == "" || petKindOf(v) == petKind(rawKind) {
			match = append(match, v)
		}
	}
	if len(match) == 1 {
		return match[0]
	}
	return ""
}

func (c *sentenceCtx) renamePet(e *entity, rawKind, rawOld, rawNew string) {
	n, ok := cleanName(rawNew)
	if !ok {
		return
	}
	old := findPet(e, rawKind, rawOld)
	if old == "" || same(petName(old), n) {
		return
	}
	e.close(Pet, "", c.t, func(v string) bool { return v == old })
	e.set(Pet, "", petValue(n, petKindOf(old)), c.t, false)
}

func (c *sentenceCtx) endPet(e *entity, rawKind, rawName string) {
	if old := findPet(e, rawKind, rawName); old != "" {
		e.close(Pet, "", c.t, func(v string) bool { return v == old })
	}
}

func (c *sentenceCtx) setPartner(rawName, status string) {
	n, ok := cleanName(rawName)
	if !ok || Key(n) == Key(c.speaker.name) {
		return
	}
	c.speaker.set(Partner, "", n, c.t, true)
	if status != "" {
		c.speaker.set(Relationship, "", status, c.t, true)
	}
}

// endPartner closes the partner (the one named, when a name is given) and
// sets the status.
func (c *sentenceCtx) endPartner(rawName, status string) {
	if n, ok := cleanName(rawName); ok {
		if c.speaker.close(Partner, "", c.t, func(v string) bool { return same(v, n) }) == 0 {
			return // someone else
		}
	} else {
		c.speaker.close(Partner, "", c.t, nil)
	}
	c.speaker.set(Relationship, "", status, c.t, true)
}

// notFavorite are the words after "my favourite" that name a moment, not a
// preference ("my favourite part was ...").
var notFavorite = map[string]bool{"part": true, "thing": true, "moment": true, "memory": true, "bit": true,
	"way": true, "time": true, "day": true, "one": true, "kind": true, "thing about": true, "part about": true}

// valueStop ends a favourite's value.
var valueStop = regexp.MustCompile(`(?i)\s+(?:because|but|since|which|though|right now|these days|at the moment|lately|ever|by far|so|and i|and it|and we)\b.*$`)

func (c *sentenceCtx) setFavorite(rawKey, rawValue string) {
	key := strings.ToLower(strings.TrimSpace(rawKey))
	if notFavorite[key] || notFavorite[strings.Fields(key)[0]] {
		return
	}
	if strings.HasSuffix(key, "s") && !strings.HasSuffix(key, "ss") && len(key) > 3 {
		key = strings.TrimSuffix(key, "s")
	}
	v := strings.TrimSpace(valueStop.ReplaceAllString(rawValue, ""))
	v = strings.TrimSuffix(strings.TrimSuffix(v, " now"), " too")
	ws := strings.Fields(v)
	if len(ws) == 0 || len(ws) > 6 || stopNames[ws[0]] && len(ws) == 1 {
		return
	}
	switch strings.ToLower(ws[0]) {
	case "it", "this", "that", "which", "what", "he", "she", "they", "probably", "definitely":
		return
	}
	c.speaker.set(Favorite, key, strings.Join(ws, " "), c.t, true)
}

// plan records a plan ("trip to" Japan); "instead" drops the other plans
// of the same kind.
func (c *sentenceCtx) plan(kind, raw string) {
	p, ok := cleanPlace(raw)
	if !ok {
		return
	}
	v := kind + " " + p
	if insteadRe.MatchString(c.text) {
		c.speaker.close(Plan, "", c.t, func(x string) bool { return strings.HasPrefix(x, kind+" ") && !same(x, v) })
	}
	c.speaker.set(Plan, "", v, c.t, true)
	if c.fresh == nil {
		c.fresh = map[string]bool{}
	}
	c.fresh[v] = true
}

var renameRe = regexp.MustCompile(`(?i)\b(?:renamed|new name)\b`)

var insteadRe = regexp.MustCompile(`(?i)\binstead\b`)

// cancelPlans closes the plans the sentence names (by their place); when it
// names none and there is one plan, that one.
func (c *sentenceCtx) cancelPlans() {
	cur := c.speaker.current(Plan, "")
	lower := strings.ToLower(c.text)
	var hit []string
	for _, v := range cur {
		if c.fresh[v] {
			continue // stated by this very sentence
		}
		p := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(v, "trip to "), "move to "))
		if strings.Contains(lower, p) {
			hit = append(hit, v)
		}
	}
	if len(hit) == 0 && len(cur) == 1 && !c.fresh[cur[0]] && planWordRe.MatchString(c.text) {
		hit = cur
	}
	for _, h := range hit {
		c.speaker.close(Plan, "", c.t, func(v string) bool { return v == h })
	}
}

var planWordRe = regexp.MustCompile(`(?i)\b(?:trip|plans?|vacation|holiday|move|moving|flight|travel)\b`)
