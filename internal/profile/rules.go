package profile

import (
	"regexp"
	"strings"
)

// The rules. Each is a regular expression over one sentence and what a
// match states. Verbs match in any case; values that are names (places,
// companies, people, pets) must be capitalised, which is what keeps "I live
// in a small flat" out. Patterns are built from the pieces below.
const (
	// adv are the adverbs allowed between a subject and its verb.
	adv = `(?:\s+(?i:just|recently|finally|actually|now|also|officially|eventually|already|currently|still|really|even|happily))*`
	// place is one to four capitalised words, with the small words of
	// place names between them ("Rio de Janeiro").
	place = `([A-Z][\p{L}'-]*(?:\s+(?:(?:de|da|do|del|la|le|of|upon|am|on|the)\s+)?[A-Z][\p{L}'-]*){0,3})`
	// org is like place with digits and "&" ("Procter & Gamble").
	org = `([A-Z][\p{L}\d&'.-]*(?:\s+(?:(?:of|and|&|the|de|for)\s+)?[A-Z][\p{L}\d&'.-]*){0,3})`
	// name is one capitalised word.
	name = `([A-Z][\p{L}'-]+)`
	// title is one to four lower-case words (cut at the first stop word
	// by cleanTitle).
	title = `([a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,3})`
	// titleOrg is a title optionally followed by "at" and an org:
	// groups title, org (first form) and title (second form); see jobOf.
	titleOrg = `(?:([a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,3}?)\s+(?i:at|for|with)\s+` + org + `|` + title + `)`
	an       = `(?:(?i:an?)\s+)?`
	// kind is a kind of pet.
	kind = `(?i:(guinea pig|dog|puppy|pup|cat|kitten|kitty|hamster|rabbit|bunny|parrot|bird|budgie|goldfish|fish|turtle|tortoise|horse|pony|snake|lizard|gecko|ferret|chinchilla|hedgehog|` + breeds + `))`
	// breeds are dog breeds, which stand for "dog".
	breeds = `greyhound|labrador|retriever|poodle|beagle|terrier|corgi|husky|pug|dachshund|shepherd|spaniel|bulldog|chihuahua|collie|dalmatian|rottweiler|schnauzer|doberman`
	// partnerWord names a partner.
	partnerWord = `(?i:(boyfriend|girlfriend|partner|husband|wife|fianc[eé]e?))`
	// relWord names a relative or acquaintance.
	relWord = `(?i:(sister|brother|mom|mother|mum|dad|father|son|daughter|cousin|friend|aunt|uncle|grandma|grandmother|grandpa|grandfather|niece|nephew|boss|co-?worker|colleague|roommate|flatmate|neighbou?r|boyfriend|girlfriend|partner|husband|wife|fianc[eé]e?))`
	i       = `\b(?i:i)`
	iwe     = `\b(?i:i|we)`
	// me is a first-person subject, or none at the start of a sentence
	// ("Lost my job as a banker yesterday").
	me     = `(?:^|\b(?i:i|we)\s+)`
	have   = `(?i:'ve|\s+have|\s+had)?`
	am     = `(?i:'m|\s+am|'re|\s+are)`
	amOpt  = am + `?`
	anyOf  = `(?i:my|our)`
	adjPet = `(?:(?i:new|little|sweet|old|beloved|adopted|rescue|cute|adorable|baby|lovely)\s+)*`
)

// petNeeds are the needs of the pet mention rule: the kinds and breeds.
var petNeeds = "dog|pup|cat|kitt|hamster|rabbit|bunn|parrot|bird|budgie|fish|turtle|tortoise|horse|pony|snake|lizard|gecko|ferret|chinchilla|hedgehog|guinea|" + breeds

// rule is one pattern and what its match states. groups are the match's
// submatches (groups[0] is the whole match).
type rule struct {
	need []string
	re   *regexp.Regexp
	do   func(c *sentenceCtx, g []string)
}

// sentenceCtx is one sentence being read.
type sentenceCtx struct {
	d       *deriver
	speaker *entity
	t       Turn
	text    string
	// lower is text in lower case, for the rules' needs.
	lower string
	// fresh holds the plans this sentence stated.
	fresh map[string]bool
}

// r makes a rule. need lists ("|"-separated) lower-case strings of which
// a sentence must contain one for the pattern to be tried: most sentences
// are about none of this, and a substring test costs far less than a
// regular expression.
func r(need, pattern string, do func(c *sentenceCtx, g []string)) rule {
	return rule{need: strings.Split(need, "|"), re: regexp.MustCompile(pattern), do: do}
}

// firstPerson are the rules about the speaker, in the order they apply to a
// sentence (statements before the closings they may come with).
var firstPerson = []rule{
	// Home.
	r("moved|relocated", `(?:^|`+iwe+have+adv+`\s+)`+`(?i:moved|relocated)(?:\s+(?i:back))?\s+(?i:to)\s+`+place, func(c *sentenceCtx, g []string) {
		c.setPlace(c.speaker, Home, g[1])
	}),
	r("live|living|based|settled", iwe+amOpt+adv+`\s+(?i:live|living|based|settled)\s+(?i:in)\s+`+place, func(c *sentenceCtx, g []string) {
		c.setPlace(c.speaker, Home, g[1])
	}),
	r("live", iwe+`\s+(?i:don't|do not|no longer)\s+(?i:live)\s+(?i:in)\s+`+place, func(c *sentenceCtx, g []string) {
		if p, ok := cleanPlace(g[1]); ok {
			c.speaker.close(Home, "", c.t, func(v string) bool { return same(v, p) })
		}
	}),
	r("moved", iwe+have+adv+`\s+(?i:moved)\s+(?i:out of|away from)\s+`+place, func(c *sentenceCtx, g []string) {
		if p, ok := cleanPlace(g[1]); ok {
			c.speaker.close(Home, "", c.t, func(v string) bool { return same(v, p) })
		}
	}),
	r("lived|live", iwe+`\s+(?i:used to live|once lived|previously lived)\s+(?i:in)\s+`+place, func(c *sentenceCtx, g []string) {
		if p, ok := cleanPlace(g[1]); ok {
			c.speaker.past(Home, "", p, c.t)
		}
	}),
	r("from", i+`(?i:'m|\s+am)\s+(?:(?i:originally)\s+)?(?i:from)\s+`+place, func(c *sentenceCtx, g []string) {
		c.setPlace(c.speaker, Hometown, g[1])
	}),
	r("grew up", i+`\s+(?i:grew up)\s+(?i:in)\s+`+place, func(c *sentenceCtx, g []string) {
		c.setPlace(c.speaker, Hometown, g[1])
	}),

	// Job and employer.
	r("work", i+amOpt+adv+`\s+(?i:work|working)\s+(?i:as)\s+`+an+titleOrg, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, g[1]+g[3], g[2], false)
	}),
	r("job|position|role|gig", i+have+adv+`\s+(?i:got|landed|accepted|took|started|began|found)\s+(?i:a|an|my|the)\s+(?:(?i:new)\s+)?(?i:job|position|role|gig)\s+(?i:as)\s+`+an+titleOrg, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, g[1]+g[3], g[2], true)
	}),
	r("promoted", i+have+adv+`\s+(?i:got|been)\s+(?i:promoted)\s+(?i:to)\s+`+an+title, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, g[1], "", false)
	}),
	r("work", i+amOpt+adv+`\s+(?i:work|working)\s+(?i:at|for)\s+`+org, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, "", g[1], false)
	}),
	r("job|position|role|internship", i+have+adv+`\s+(?i:got|landed|accepted|took|started|began|found)\s+(?i:a|an|my|the)\s+(?:(?i:new)\s+)?(?i:job|position|role|internship)\s+(?i:at|with)\s+`+org, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, "", g[1], true)
	}),
	r("working", i+have+adv+`\s+(?i:started|began)\s+(?i:working)\s+(?i:at|for)\s+`+org, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, "", g[1], true)
	}),
	r("joined", i+have+adv+`\s+(?i:joined)\s+`+org+`\s+(?i:as)\s+`+an+title, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, g[2], g[1], true)
	}),
	r("quit|left|lost", me+`(?:(?i:also|just)\s+)*(?i:quit|left|lost)\s+(?i:my)\s+(?:(?i:old)\s+)?(?i:job|position|role)\b(?:\s+(?i:as)\s+`+an+titleOrg+`|\s+(?i:at|with)\s+`+org+`)?`, func(c *sentenceCtx, g []string) {
		// The job it names, if any, held until now.
		if tt, ok := cleanTitle(g[1] + g[3]); ok {
			c.speaker.past(Job, "", tt, c.t)
		}
		if o, ok := cleanName(g[2] + g[4]); ok {
			c.speaker.past(Employer, "", o, c.t)
		}
		c.speaker.close(Job, "", c.t, nil)
		c.speaker.close(Employer, "", c.t, nil)
	}),
	r("quit|left", i+have+adv+`\s+(?i:quit|left)\s+`+org, func(c *sentenceCtx, g []string) {
		if o, ok := cleanName(g[1]); ok && c.speaker.close(Employer, "", c.t, func(v string) bool { return same(v, o) }) > 0 {
			c.speaker.close(Job, "", c.t, nil)
		}
	}),
	r("fired|laid off|let go", i+`(?i:\s+was|\s+got|\s+have been|'ve been|\s+just got|\s+was just)\s+(?i:fired|laid off|let go)\b`, func(c *sentenceCtx, g []string) {
		c.speaker.close(Job, "", c.t, nil)
		c.speaker.close(Employer, "", c.t, nil)
	}),
	r("work", i+`(?i:\s+no longer|\s+don't|\s+do not)\s+(?i:work)\s+(?i:at|for)\s+`+org, func(c *sentenceCtx, g []string) {
		if o, ok := cleanName(g[1]); ok && c.speaker.close(Employer, "", c.t, func(v string) bool { return same(v, o) }) > 0 {
			c.speaker.close(Job, "", c.t, nil)
		}
	}),
	r("unemployed|between jobs|out of work|jobless", i+`(?i:'m|\s+am)`+adv+`\s+(?i:unemployed|between jobs|out of work|jobless)\b`, func(c *sentenceCtx, g []string) {
		c.speaker.close(Job, "", c.t, nil)
		c.speaker.close(Employer, "", c.t, nil)
	}),
	r("job", i+have+adv+`\s+(?i:got|landed|accepted|took|started)\s+(?i:the)\s+`+org+`\s+(?i:job|position|role|internship)\b`, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, "", g[1], true)
	}),
	r("retired", i+have+adv+`\s+(?i:retired)\b`, func(c *sentenceCtx, g []string) {
		c.speaker.close(Employer, "", c.t, nil)
		c.speaker.set(Job, "", "retired", c.t, true)
	}),

	// Pets.
	r(petNeeds, `\b`+anyOf+`\s+`+adjPet+kind+`\s+`+name, func(c *sentenceCtx, g []string) {
		c.setPet(c.speaker, g[1], g[2])
	}),
	r("named|called", `(?:^|`+iwe+have+adv+`\s+)(?:(?i:just)\s+)?(?i:got|adopted|rescued|bought|have|brought home)\s+(?i:a|an|another)\s+`+adjPet+kind+`,?\s+(?i:named|called)\s+`+name, func(c *sentenceCtx, g []string) {
		c.setPet(c.speaker, g[1], g[2])
	}),
	r("renamed", iwe+have+adv+`\s+(?i:renamed)\s+(?:`+anyOf+`\s+`+adjPet+kind+`\s+)?(?:`+name+`\s+)?(?:(?i:to)\s+)?`+name, func(c *sentenceCtx, g []string) {
		c.renamePet(c.speaker, g[1], g[2], g[3])
	}),
	r("name", `\b`+anyOf+`\s+`+kind+`(?:'s)?\s+(?:(?i:new)\s+)?(?i:name)\s+(?i:is)\s+(?:(?i:now)\s+)?`+name, func(c *sentenceCtx, g []string) {
		c.renamePet(c.speaker, g[1], "", g[2])
	}),
	r("passed|died|put down|ran away", `\b`+anyOf+`\s+`+adjPet+kind+`(?:,?\s+`+name+`,?)?\s+(?i:passed away|died|passed|was put down|ran away)\b`, func(c *sentenceCtx, g []string) {
		c.endPet(c.speaker, g[1], g[2])
	}),
	r("lost|rehome|gave away|give away", iwe+have+adv+`\s+(?i:lost|rehomed|gave away|had to give away|had to rehome)\s+`+anyOf+`\s+`+adjPet+kind+`(?:,?\s+`+name+`)?`, func(c *sentenceCtx, g []string) {
		c.endPet(c.speaker, g[1], g[2])
	}),

	// Partner and relationship status.
	r("boyfriend|girlfriend|partner|husband|wife|fianc", `\b(?i:my)\s+(?:(?i:new|lovely|amazing|wonderful|dear|sweet)\s+)*`+partnerWord+`\s+`+name, func(c *sentenceCtx, g []string) {
		c.setPartner(g[2], statusOf(g[1]))
	}),
	r("dating|going out", i+`(?i:'m|\s+am|'ve been|\s+have been)`+adv+`\s+(?i:dating|going out with)\s+`+name, func(c *sentenceCtx, g []string) {
		c.setPartner(g[1], "dating")
	}),
	r("dating|going out", iwe+adv+`\s+(?i:started|began)\s+(?i:dating|going out with)\s+`+name, func(c *sentenceCtx, g []string) {
		c.setPartner(g[1], "dating")
	}),
	r("married", i+have+adv+`\s+(?:(?i:got)\s+)?(?i:married)\s+(?:(?i:to)\s+)?`+name, func(c *sentenceCtx, g []string) {
		c.setPartner(g[1], "married")
	}),
	r("engaged|married", i+`(?i:'m|\s+am)`+adv+`\s+(?i:engaged|married)\s+(?i:to)\s+`+name, func(c *sentenceCtx, g []string) {
		c.setPartner(g[2], strings.ToLower(g[1]))
	}),
	r("married|tied the knot", iwe+have+adv+`\s+(?i:got married|tied the knot)\b`, func(c *sentenceCtx, g []string) {
		c.speaker.set(Relationship, "", "married", c.t, true)
	}),
	r("engaged", iwe+have+adv+`\s+(?i:got engaged)\b`, func(c *sentenceCtx, g []string) {
		c.speaker.set(Relationship, "", "engaged", c.t, true)
	}),
	r("broke|split|separated", i+have+adv+`\s+(?i:broke up|broken up|split up|split|separated)\s+(?i:with)\s+(?:(?i:my)\s+`+partnerWord+`,?\s*)?(?:`+name+`)?`, func(c *sentenceCtx, g []string) {
		c.endPartner(g[2], "single")
	}),
	r("broke|split|separated|quits", `\b(?i:we)`+have+adv+`\s+(?i:broke up|broken up|split up|separated|called it quits)\b`, func(c *sentenceCtx, g []string) {
		c.endPartner("", "single")
	}),
	r("divorced", iwe+have+adv+`\s+(?i:got divorced|divorced)\b`, func(c *sentenceCtx, g []string) {
		c.endPartner("", "divorced")
	}),
	r("single|divorced", i+`(?i:'m|\s+am)`+adv+`\s+((?i:single|divorced))(?:[\s.,!;]|$)`, func(c *sentenceCtx, g []string) {
		c.endPartner("", strings.ToLower(g[1]))
	}),

	// Favourites.
	r("favorite|favourite", `\b(?i:my)\s+(?:(?i:new|all-time|absolute|current|very)\s+)*(?i:favou?rite)\s+([a-z]+(?:\s+[a-z]+)?)\s+(?i:is|is now|has to be|has become)\s+([^,.;!?]+)`, func(c *sentenceCtx, g []string) {
		c.setFavorite(g[1], g[2])
	}),
	r("favorite|favourite", `([A-Z][\p{L}\d'-]*(?:\s+[A-Z][\p{L}\d'-]*){0,4})\s+(?i:is|are)\s+(?:(?i:now)\s+)?(?i:my)\s+(?:(?i:new|all-time|absolute)\s+)?(?i:favou?rite)\s+([a-z]+)`, func(c *sentenceCtx, g []string) {
		c.setFavorite(g[2], g[1])
	}),

	// Plans: trips and moves.
	r("moving|relocating", iwe+am+adv+`\s+(?i:moving|relocating)\s+(?i:to)\s+`+place, func(c *sentenceCtx, g []string) {
		c.plan("move to", g[1])
	}),
	r("move|relocate", iwe+amOpt+adv+`\s+(?i:planning|going|about|plan|intend|intending)\s+(?i:to)\s+(?i:move|relocate)\s+(?i:to)\s+`+place, func(c *sentenceCtx, g []string) {
		c.plan("move to", g[1])
	}),
	r("trip|vacation|holiday|getaway|planning|heading|flying|travel|going on", iwe+am+adv+`\s+(?:(?i:planning|heading|flying|traveling|travelling)(?:\s+(?i:on))?|(?i:going\s+on))\s+(?:(?i:a|an|our|my)\s+(?:[a-z]+\s+)?(?i:trip|vacation|holiday|getaway)\s+)?(?i:to)\s+`+place, func(c *sentenceCtx, g []string) {
		c.plan("trip to", g[1])
	}),
	r("planning|plan|intend", iwe+amOpt+adv+`\s+(?i:planning|plan|intend|intending)\s+(?i:to)\s+(?i:visit|go to|travel to|fly to)\s+`+place, func(c *sentenceCtx, g []string) {
		c.plan("trip to", g[1])
	}),
	r("trip|vacation|holiday|getaway", iwe+have+adv+`\s+(?i:booked|planned)\s+(?i:a|an|our|my)\s+`+place+`\s+(?i:trip|vacation|holiday|getaway)\b`, func(c *sentenceCtx, g []string) {
		c.plan("trip to", g[1])
	}),
	r("booked|planned", iwe+have+adv+`\s+(?i:booked|planned)\s+(?i:a|an|our|my)\s+(?:[a-z]+\s+)?(?i:trip|vacation|holiday|flight|getaway)\s+(?i:to)\s+`+place, func(c *sentenceCtx, g []string) {
		c.plan("trip to", g[1])
	}),
	r("cancel|called off|scrapped|postponed|put off|gave up|not|no longer", `(?i:\b(?:i|we)\b.*\b(?:cancel(?:l)?ed|called off|scrapped|postponed|put off|gave up on)\b|\b(?:i|we)(?:'m|'re| am| are)\s+(?:not|no longer)\s+(?:going|moving|traveling|travelling|planning)\b)`, func(c *sentenceCtx, g []string) {
		c.cancelPlans()
	}),
}

// named are the rules about a person the speaker names by relation ("my
// sister Ana"); g[1] is the relation and g[2] the name. The rest of the
// sentence is then read for what it says of them (thirdPerson).
var named = r("my ", `\b(?i:my)\s+(?:(?i:older|younger|big|little|best|old|new|twin|step|dear|lovely)\s+)*`+relWord+`\s+`+name, nil)

// tail is how a thirdPerson rule starts: right after the name, or after a
// first clause joined by "and" ("my sister Ana lives in Madrid and works
// as a nurse"), with no other subject between.
const tail = `^(?:,?\s+(?:(?i:who)\s+)?|(?:\s+[^,;]*?)?\s+(?i:and)\s+)` + adv + `\s*`

// thirdPerson are the rules read right after a named person.
var thirdPerson = []rule{
	r("live|moved|relocated", tail+`(?:(?i:has|had)\s+)?(?i:lives|moved|relocated|is living)\s+(?i:in|to)\s+`+place, func(c *sentenceCtx, g []string) {
		// c.speaker is the named person here.
		c.setPlace(c.speaker, Home, g[1])
	}),
	r("work", tail+`(?i:works|is working)\s+(?i:as)\s+`+an+titleOrg, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, g[1]+g[3], g[2], false)
	}),
	r("work", tail+`(?i:works|is working)\s+(?i:at|for)\s+`+org, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, "", g[1], false)
	}),
	r("got|landed|started", tail+`(?:(?i:has)\s+)?(?i:got|landed|started)\s+(?i:a)\s+(?:(?i:new)\s+)?(?i:job)(?:\s+(?i:as)\s+`+an+titleOrg+`|\s+(?i:at|with)\s+`+org+`)`, func(c *sentenceCtx, g []string) {
		c.setJob(c.speaker, g[1]+g[3], g[2]+g[4], true)
	}),
}

// stopNames are capitalised words that are not names, places or companies.
var stopNames = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`I I'm I've I'd I'll The A An And But So Then It It's He She They We You My Our His Her Their
		This That These Those Oh Yes No Hi Hey Thanks Thank Well Also Just What When Where Who How Why Which
		Mr Mrs Ms Dr Mom Dad Mum God OK Okay Wow Yeah Sure Not Now Here There Today Tomorrow Yesterday
		January February March April May June July August September October November December
		Monday Tuesday Wednesday Thursday Friday Saturday Sunday Christmas Easter Thanksgiving Halloween
		Last Next In On At For With From To Of By Because Since Though Although If Me Him Them Us`) {
		stopNames[w] = true
	}
}

// cleanName trims a captured name, place or company: trailing stop words
// go ("Lisbon Last" cannot happen, but "Paris And" can), and a value that
// is a stop word is rejected.
func cleanName(s string) (string, bool) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "'s")
	ws := strings.Fields(strings.TrimRight(s, ".'-"))
	for len(ws) > 0 && (stopNames[ws[len(ws)-1]] || isSmall(ws[len(ws)-1])) {
		ws = ws[:len(ws)-1]
	}
	if len(ws) == 0 || stopNames[ws[0]] && len(ws) == 1 {
		return "", false
	}
	if stopNames[ws[0]] && ws[0] != "The" {
		return "", false
	}
	return strings.Join(ws, " "), true
}

// isSmall reports the lower-case joiners place and org allow inside a name.
func isSmall(w string) bool { return w != "" && w[0] >= 'a' && w[0] <= 'z' }

// cleanPlace is cleanName for places.
func cleanPlace(s string) (string, bool) { return cleanName(s) }

// titleStop ends a job title.
var titleStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`at for in and with because since but so now there here which who that on from to this
		last next these those part full right again too as of my our the a an while when where until after before or
		like lately yesterday today tomorrow tonight recently ago soon anymore again already`) {
		titleStop[w] = true
	}
}

// cleanTitle cuts a job title at its first stop word.
func cleanTitle(s string) (string, bool) {
	var out []string
	for _, w := range strings.Fields(s) {
		if titleStop[w] {
			break
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return "", false
	}
	return strings.Join(out, " "), true
}

var breedRe = regexp.MustCompile(`^(?:` + breeds + `)$`)

// statusOf maps a partner word to the relationship status it implies.
func statusOf(word string) string {
	switch strings.ToLower(word) {
	case "husband", "wife":
		return "married"
	case "boyfriend", "girlfriend":
		return "dating"
	case "partner":
		return "in a relationship"
	}
	return "engaged" // fiancé(e)
}

// petKind normalises a kind of pet.
func petKind(k string) string {
	switch k = strings.ToLower(k); k {
	case "puppy", "pup":
		return "dog"
	case "kitten", "kitty":
		return "cat"
	case "bunny":
		return "rabbit"
	}
	if breedRe.MatchString(k) {
		return "dog"
	}
	return k
}
