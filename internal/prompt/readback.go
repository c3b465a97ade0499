package prompt

import (
	"strconv"
	"strings"
)

// SelectDataOf reads back the data a select prompt's user text was
// rendered from, for tests that render recorded prompts again (the
// bench's, prompttest). It reads prompts without turn notes and without
// " :: " in an event's title, as the recorded ones are; of others it may
// read other data. TestSelectBenchData checks that the data it reads
// renders each recorded prompt exactly.
//
// It lives here rather than in prompttest because this package's own
// tests use it, and prompttest, which jsonx's tests import, cannot
// import this package (which imports jsonx).
func SelectDataOf(user string) SelectData {
	var d SelectData
	var turns *[]Turn
	for _, l := range strings.Split(user, "\n") {
		switch {
		case strings.HasPrefix(l, "Question: "):
			d.Question = strings.TrimPrefix(l, "Question: ")
		case strings.HasPrefix(l, "(event "):
			id, rest, _ := strings.Cut(strings.TrimPrefix(l, "(event "), ") ")
			title, summary, _ := strings.Cut(rest, " :: ")
			d.Events = append(d.Events, SelectEvent{Event: Event{ID: id, Title: title, Summary: summary}})
		case l == "Its turns:" && len(d.Events) > 0:
			turns = &d.Events[len(d.Events)-1].Turns
		case l == "Turns found by search:":
			turns = &d.Turns
		case strings.HasPrefix(l, "[") && turns != nil:
			id, rest, _ := strings.Cut(l[1:], "] ")
			date, rest, _ := strings.Cut(rest, " | ")
			speaker, text, _ := strings.Cut(rest, ": ")
			if date == "unknown date" {
				date = "" // as writeTurn writes an empty date
			}
			*turns = append(*turns, Turn{ID: id, Date: date, Speaker: speaker, Text: text})
		case strings.HasPrefix(l, "Return \"turn_ids\""):
			_, rest, _ := strings.Cut(l, "at most ")
			n, _, _ := strings.Cut(rest, ",")
			d.Max, _ = strconv.Atoi(n)
		}
	}
	return d
}
