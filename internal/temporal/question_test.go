package temporal

import (
	"reflect"
	"testing"
)

func TestAnalyzeQuestion(t *testing.T) {
	tests := []struct {
		q        string
		temporal bool
		kind     IntentKind
		order    Order
		rng      string // Interval.String() of Range, "" for nil
		asks     bool
	}{
		// LoCoMo category 2 (temporal).
		{"When did Caroline go to the LGBTQ support group?", true, IntentWhen, OrderNone, "", true},
		{"When is Melanie planning on going camping?", true, IntentWhen, OrderNone, "", true},
		{"When Jon has lost his job as a banker?", true, IntentWhen, OrderNone, "", true},
		{"How long has Caroline had her current group of friends for?", true, IntentHowLong, OrderNone, "", true},
		{"How long ago was Caroline's 18th birthday?", true, IntentHowLong, OrderNone, "", true},
		{"What year did John start surfing?", true, IntentYear, OrderNone, "", true},
		{"Which year did Audrey adopt the first three of her dogs?", true, IntentYear, OrderNone, "", true},
		{"What month did Tim plan on going to Universal Studios?", true, IntentMonth, OrderNone, "", true},
		{"In which month's game did John achieve a career-high score in points?", true, IntentMonth, OrderNone, "", true},
		{"Which week did Tim visit the UK for the Harry Potter Conference?", true, IntentWeek, OrderNone, "", true},
		{"What day did Tim get into his study abroad program?", true, IntentDate, OrderNone, "", true},
		{"How many weeks passed between Maria adopting Coco and Shadow?", true, IntentHowLong, OrderNone, "", true},
		{"How many years passed between Audrey adopting Pixie and her other three dogs?", true, IntentHowLong, OrderNone, "", true},
		{"How many pets did Andrew have, as of September 2023?", true, IntentDuring, OrderNone, "September 2023", false},
		{"Did Andrew have a pet dog during March 2023?", true, IntentDuring, OrderNone, "March 2023", false},
		{"Where was Tim in the week before 16 November 2023?", true, IntentOrder, OrderBefore, "16 November 2023", false},
		{"When did Melanie go camping in June?", true, IntentWhen, OrderNone, "", true},
		// Other categories that still carry time.
		{"What did John attend with his colleagues in March 2023?", true, IntentDuring, OrderNone, "March 2023", false},
		{"What did Joanna just finish last Friday on 23 January, 2022?", true, IntentDuring, OrderNone, "23 January 2022", false},
		{"Where was John between August 11 and August 15 2023?", true, IntentDuring, OrderNone, "15 August 2023", false},
		{"Which city was John in before traveling to Chicago?", true, IntentOrder, OrderBefore, "", false},
		{"When did Melanie go on a hike after the roadtrip?", true, IntentWhen, OrderAfter, "", true},
		{"What did Melanie realize after the charity race?", true, IntentOrder, OrderAfter, "", false},
		{"When was the last time Caroline went hiking?", true, IntentWhen, OrderLast, "", true},
		{"Which came first, the race or the camping trip?", true, IntentOrder, OrderFirst, "", false},
		{"What has Caroline been doing recently?", true, IntentOrder, OrderLast, "", false},
		{"How often does Melanie go to the beach?", true, IntentFrequency, OrderNone, "", false},
		{"How many times has Nate won a tournament?", true, IntentFrequency, OrderNone, "", false},
		{"Where did Caroline move from 4 years ago?", true, IntentDuring, OrderNone, "", false},
		{"What did Melanie and her family see during their camping trip last year?", true, IntentDuring, OrderNone, "", false},
		// Not temporal.
		{"What genre is Joanna's first screenplay?", false, IntentNone, OrderNone, "", false},
		{"What is Caroline's identity?", false, IntentNone, OrderNone, "", false},
		{"How did Joanna feel when someone wrote her a letter?", false, IntentNone, OrderNone, "", false},
		{"What did Melanie and her family see during their camping trip?", false, IntentNone, OrderNone, "", false},
		{"Would Caroline likely have Dr. Seuss books on her bookshelf?", false, IntentNone, OrderNone, "", false},
		{"What may Caroline do next?", false, IntentNone, OrderNone, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			in := AnalyzeQuestion(tc.q)
			rng := ""
			if in.Range != nil {
				rng = in.Range.String()
			}
			if in.Temporal != tc.temporal || in.Kind != tc.kind || in.Order != tc.order || rng != tc.rng || in.AsksTime() != tc.asks {
				t.Errorf("AnalyzeQuestion(%q) = temporal=%v kind=%v order=%v range=%q asks=%v cues=%q; want %v %v %v %q %v",
					tc.q, in.Temporal, in.Kind, in.Order, rng, in.AsksTime(), in.Cues, tc.temporal, tc.kind, tc.order, tc.rng, tc.asks)
			}
			if in.Temporal && len(in.Cues) == 0 {
				t.Errorf("temporal question without cues: %+v", in)
			}
			if !in.Temporal && (len(in.Cues) != 0 || in.Range != nil) {
				t.Errorf("non-temporal question with cues or range: %+v", in)
			}
		})
	}
}

func TestAnalyzeQuestionAt(t *testing.T) {
	q := "What did Melanie and her family see during their camping trip last year?"
	in := AnalyzeQuestionAt(q, locomoRef)
	if in.Range == nil || in.Range.String() != "2022" {
		t.Fatalf("AnalyzeQuestionAt(%q) range = %v; want 2022", q, in.Range)
	}
	if len(in.Refs) != 1 || in.Refs[0].Text != "last year" {
		t.Errorf("refs = %+v", in.Refs)
	}
	// Without a reference the relative expression is only a cue.
	if in0 := AnalyzeQuestion(q); in0.Range != nil || !reflect.DeepEqual(in0.Cues, []string{"last year"}) {
		t.Errorf("AnalyzeQuestion(%q) = %+v", q, in0)
	}
	// The hull of several expressions.
	in = AnalyzeQuestionAt("What happened between May 2022 and last week?", locomoRef)
	if in.Range == nil || !in.Range.Start.Equal(day("2022-05-01")) || !in.Range.End.Equal(day("2023-05-08")) {
		t.Errorf("hull = %v", in.Range)
	}
}
