package temporal

import (
	"reflect"
	"testing"
	"time"
)

// locomoRef is LoCoMo conv-26 session 1, "1:56 pm on 8 May, 2023", a Monday.
var locomoRef = time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)

func day(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02", s, time.UTC)
	if err != nil {
		panic(err)
	}
	return t
}

func TestResolve(t *testing.T) {
	const (
		P = KindPast
		N = KindPresent
		F = KindFuture
		A = KindAbsolute
		D = KindDuration
	)
	tests := []struct {
		text       string
		span       string // expected matched text
		start, end string // half-open, YYYY-MM-DD
		kind       Kind
		gran       Granularity
		fuzzy      bool
	}{
		// Days (real LoCoMo turns first).
		{"I went to a LGBTQ support group yesterday and it was so powerful.", "yesterday", "2023-05-07", "2023-05-08", P, GranDay, false},
		{"Hey Nate! Yesterday was crazy cool", "Yesterday", "2023-05-07", "2023-05-08", P, GranDay, false},
		{"This pic's from last night - looks like everyone was having fun", "last night", "2023-05-07", "2023-05-08", P, GranDay, false},
		{"I'm so excited for tonight!", "tonight", "2023-05-08", "2023-05-09", N, GranDay, false},
		{"I went for a run this morning", "this morning", "2023-05-08", "2023-05-09", N, GranDay, false},
		{"I finished it today", "today", "2023-05-08", "2023-05-09", N, GranDay, false},
		{"it happened the day before yesterday", "the day before yesterday", "2023-05-06", "2023-05-07", P, GranDay, false},
		{"Thanks so much, Nate! Sure! I'll come over tomorrow if that's fine.", "tomorrow", "2023-05-09", "2023-05-10", F, GranDay, false},
		{"Tomorrow's gonna be an awesome night at the grand opening", "Tomorrow", "2023-05-09", "2023-05-10", F, GranDay, false},
		{"the day after tomorrow works", "the day after tomorrow", "2023-05-10", "2023-05-11", F, GranDay, false},
		{"I ate sushi earlier today", "earlier today", "2023-05-08", "2023-05-09", N, GranDay, false},
		// Weeks, weekends, months, years (ISO weeks; 8 May 2023 is a Monday).
		{"I went hiking last week and got into a bad spot", "last week", "2023-05-01", "2023-05-08", P, GranWeek, false},
		{"This week has been swamped with exams", "This week", "2023-05-08", "2023-05-15", N, GranWeek, false},
		{"see you next week", "next week", "2023-05-15", "2023-05-22", F, GranWeek, false},
		{"I had a wicked day out with the gang last weekend", "last weekend", "2023-05-06", "2023-05-08", P, GranWeek, false},
		{"what are you doing this weekend?", "this weekend", "2023-05-13", "2023-05-15", F, GranWeek, false},
		{"next weekend is the party", "next weekend", "2023-05-13", "2023-05-15", F, GranWeek, false},
		{"this past weekend was great", "this past weekend", "2023-05-06", "2023-05-08", P, GranWeek, false},
		{"we went camping with my fam two weekends ago", "two weekends ago", "2023-04-29", "2023-05-01", P, GranWeek, false},
		{"the weekend before last was busy", "the weekend before last", "2023-04-29", "2023-05-01", P, GranWeek, false},
		{"the week before last was busy", "the week before last", "2023-04-24", "2023-05-01", P, GranWeek, false},
		{"I just started going to boot camps with my fam last month", "last month", "2023-04-01", "2023-05-01", P, GranMonth, false},
		{"I also lost my job at Door Dash this month", "this month", "2023-05-01", "2023-06-01", N, GranMonth, false},
		{"Yay! Next month I'm having an LGBTQ art show", "Next month", "2023-06-01", "2023-07-01", F, GranMonth, false},
		{"a buddy of mine adopted last year", "last year", "2022-01-01", "2023-01-01", P, GranYear, false},
		{"next year I'll travel", "next year", "2024-01-01", "2025-01-01", F, GranYear, false},
		{"I took that pic on a hike last summer near Fort Wayne", "last summer", "2022-06-01", "2022-09-01", P, GranSeason, false},
		{"wanna plan something special for this summer", "this summer", "2023-06-01", "2023-09-01", F, GranSeason, false},
		{"next winter we ski", "next winter", "2023-12-01", "2024-03-01", F, GranSeason, false},
		{"last spring was wet", "last spring", "2022-03-01", "2022-06-01", P, GranSeason, false},
		{"I ate there earlier this week", "earlier this week", "2023-05-08", "2023-05-09", P, GranWeek, false},
		{"it opens later this month", "later this month", "2023-05-09", "2023-06-01", F, GranMonth, false},
		// Counts ago.
		{"I went to an LGBTQ conference two days ago", "two days ago", "2023-05-06", "2023-05-07", P, GranDay, false},
		{"I got a puppy two weeks ago!", "two weeks ago", "2023-04-21", "2023-04-28", P, GranWeek, false},
		{"that was a month ago", "a month ago", "2023-04-01", "2023-05-01", P, GranMonth, false},
		{"since I started transitioning three years ago", "three years ago", "2020-01-01", "2021-01-01", P, GranYear, false},
		{"I moved here 5 years ago", "5 years ago", "2018-01-01", "2019-01-01", P, GranYear, false},
		{"I saw her a couple of days ago", "a couple of days ago", "2023-05-06", "2023-05-07", P, GranDay, true},
		{"I got it a few years ago", "a few years ago", "2019-01-01", "2022-01-01", P, GranYear, true},
		{"I first watched it around 3 years ago", "around 3 years ago", "2020-01-01", "2021-01-01", P, GranYear, true},
		// Weekdays.
		{"I ran a charity race for mental health last Saturday", "last Saturday", "2023-05-06", "2023-05-07", P, GranDay, false},
		{"Last Friday, I went to an LGBTQ+ counseling workshop", "Last Friday", "2023-05-05", "2023-05-06", P, GranDay, false},
		{"By the way, I went to a poetry reading last Fri - it was really powerful!", "last Fri", "2023-05-05", "2023-05-06", P, GranDay, false},
		{"I went to a pet store last Monday", "last Monday", "2023-05-01", "2023-05-02", P, GranDay, false},
		{"Last Sat was fun", "Last Sat", "2023-05-06", "2023-05-07", P, GranDay, false},
		{"we had pizza last Friday night", "last Friday night", "2023-05-05", "2023-05-06", P, GranDay, false},
		{"the deadline is this Friday", "this Friday", "2023-05-12", "2023-05-13", F, GranDay, false},
		{"the deadline is next Friday", "next Friday", "2023-05-12", "2023-05-13", F, GranDay, false},
		{"On Friday, I got great news", "On Friday", "2023-05-05", "2023-05-06", P, GranDay, false},
		{"I won my fourth video game tournament on Friday!", "on Friday", "2023-05-05", "2023-05-06", P, GranDay, false},
		{"I'll see you on Friday", "on Friday", "2023-05-12", "2023-05-13", F, GranDay, false},
		{"we are going to the zoo on Sunday", "on Sunday", "2023-05-14", "2023-05-15", F, GranDay, false},
		{"I went over the weekend", "over the weekend", "2023-05-06", "2023-05-08", P, GranWeek, false},
		// Months and dates without a year.
		{"I went to the beach in June", "in June", "2022-06-01", "2022-07-01", P, GranMonth, false},
		{"I'm going camping in June", "in June", "2023-06-01", "2023-07-01", F, GranMonth, false},
		{"my birthday was on 7 May", "7 May", "2023-05-07", "2023-05-08", P, GranDay, false},
		{"Melanie's daughter's birthday is on August 13th, we will party", "August 13th", "2023-08-13", "2023-08-14", F, GranDay, false},
		{"we met on the 8th of March", "the 8th of March", "2023-03-08", "2023-03-09", P, GranDay, false},
		{"I met back up with my teammates on the 15th after my trip", "on the 15th", "2023-04-15", "2023-04-16", P, GranDay, false},
		{"I'll be away in early June", "early June", "2023-06-01", "2023-06-11", F, GranMonth, true},
		{"in the summer we swam", "in the summer", "2022-06-01", "2022-09-01", P, GranSeason, false},
		// Absolute.
		{"I painted that lake sunrise in 2022", "in 2022", "2022-01-01", "2023-01-01", A, GranYear, false},
		{"We adopted Max in May 2022", "in May 2022", "2022-05-01", "2022-06-01", A, GranMonth, false},
		{"the show is on 27 June, 2023", "27 June, 2023", "2023-06-27", "2023-06-28", A, GranDay, false},
		{"I met Jean on February 24, 2023", "February 24, 2023", "2023-02-24", "2023-02-25", A, GranDay, false},
		{"the 21st of January 2022 was cold", "the 21st of January 2022", "2022-01-21", "2022-01-22", A, GranDay, false},
		{"the summer of 2022 was hot", "the summer of 2022", "2022-06-01", "2022-09-01", A, GranSeason, false},
		{"see the log from 2023-04-30", "2023-04-30", "2023-04-30", "2023-05-01", A, GranDay, false},
		{"due 5/1/2023", "5/1/2023", "2023-05-01", "2023-05-02", A, GranDay, false},
		{"that was in late 2022", "late 2022", "2022-09-01", "2023-01-01", A, GranYear, true},
		{"mid-2021 was rough", "mid-2021", "2021-05-01", "2021-09-01", A, GranYear, true},
		{"since the end of last year", "since the end of last year", "2022-09-01", "2023-05-09", D, GranYear, true},
		// Durations and windows (end with the reference day included).
		{"I've been practicing art since 2016", "since 2016", "2016-01-01", "2023-05-09", D, GranYear, false},
		{"since last May I have been running", "since last May", "2022-05-01", "2023-05-09", D, GranMonth, false},
		{"I've had them for 3 years now and they bring me tons of joy!", "for 3 years now", "2020-05-08", "2023-05-09", D, GranYear, false},
		{"I've been playing for about four months now", "for about four months now", "2023-01-08", "2023-05-09", D, GranMonth, true},
		{"I'll be in Paris for two weeks", "for two weeks", "2023-05-08", "2023-05-22", D, GranWeek, false},
		{"It's been tough the past few weeks", "the past few weeks", "2023-04-10", "2023-05-09", D, GranWeek, true},
		{"So much has happened in the last month", "in the last month", "2023-04-08", "2023-05-09", D, GranMonth, false},
		{"I'm busy the next few days", "the next few days", "2023-05-09", "2023-05-13", F, GranDay, true},
		{"I will be back in two weeks", "in two weeks", "2023-05-19", "2023-05-26", F, GranWeek, false},
		{"the results come 3 days from now", "3 days from now", "2023-05-11", "2023-05-12", F, GranDay, false},
		// Vague.
		{"I took a creative writing class recently", "recently", "2023-04-08", "2023-05-09", P, GranMonth, true},
		{"I made a dairy-free chocolate cake the other day", "the other day", "2023-05-01", "2023-05-08", P, GranWeek, true},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			refs := Resolve(tc.text, locomoRef)
			if len(refs) != 1 {
				t.Fatalf("Resolve(%q) = %d refs %+v; want 1", tc.text, len(refs), refs)
			}
			r := refs[0]
			want := Ref{
				Text: tc.span, Pos: r.Pos, Start: day(tc.start), End: day(tc.end),
				Granularity: tc.gran, Kind: tc.kind, Fuzzy: tc.fuzzy,
			}
			if !reflect.DeepEqual(r, want) {
				t.Errorf("Resolve(%q)\n got %+v (%s, %v)\nwant %+v (%s, %v)", tc.text, r, Describe(r), r.Kind, want, Describe(want), want.Kind)
			}
			if tc.text[r.Pos:r.Pos+len(r.Text)] != r.Text {
				t.Errorf("Pos %d does not locate %q", r.Pos, r.Text)
			}
		})
	}
}

func TestResolveNoMatch(t *testing.T) {
	for _, text := range []string{
		"I may go to the park",
		"Hey Caroline! Since we last spoke, things are good",
		"this sun is so hot",
		"I go to yoga every Friday",
		"I signed up for eight Friday classes",
		"The Sunday market was packed",
		"our Saturday walks are the best",
		"We were teammates for four years in high school",
		"this is the last time I do that",
		"Is that your third one?",
		"I live on the 3rd floor",
		"They march in the street",
		"I scored 40 points, my highest ever",
		"I finished it in 2 weeks",
		"",
	} {
		if refs := Resolve(text, locomoRef); len(refs) != 0 {
			t.Errorf("Resolve(%q) = %+v; want none", text, refs)
		}
	}
}

func TestResolveSeveral(t *testing.T) {
	text := "Yesterday I called Mom; last week we talked about the trip in 2022, and next month we go again."
	refs := Resolve(text, locomoRef)
	var got []string
	for _, r := range refs {
		got = append(got, Describe(r))
	}
	want := []string{
		"Yesterday (7 May 2023)",
		"last week (1–7 May 2023)",
		"in 2022 (2022)",
		"next month (June 2023)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve several:\n got %q\nwant %q", got, want)
	}
	for i := 1; i < len(refs); i++ {
		if refs[i].Pos < refs[i-1].Pos+len(refs[i-1].Text) {
			t.Errorf("refs %d and %d overlap", i-1, i)
		}
	}
	if again := Resolve(text, locomoRef); !reflect.DeepEqual(refs, again) {
		t.Error("Resolve is not deterministic")
	}
}

// TestResolveReferenceDays checks the weekday and weekend rules on every day
// of one week, since they depend on the reference's weekday.
func TestResolveReferenceDays(t *testing.T) {
	tests := []struct {
		ref                         string // a day in the week of Mon 8 May 2023
		lastFri, thisFri, nextFri   string
		lastWeekend, thisWeekendSat string
	}{
		{"2023-05-08", "2023-05-05", "2023-05-12", "2023-05-12", "2023-05-06", "2023-05-13"}, // Monday
		{"2023-05-12", "2023-05-05", "2023-05-12", "2023-05-19", "2023-05-06", "2023-05-13"}, // Friday
		{"2023-05-13", "2023-05-12", "2023-05-19", "2023-05-19", "2023-05-06", "2023-05-13"}, // Saturday
		{"2023-05-14", "2023-05-12", "2023-05-19", "2023-05-19", "2023-05-06", "2023-05-13"}, // Sunday
	}
	first := func(text string, ref time.Time) time.Time {
		refs := Resolve(text, ref)
		if len(refs) != 1 {
			t.Fatalf("Resolve(%q, %v) = %+v; want 1 ref", text, ref, refs)
		}
		return refs[0].Start
	}
	for _, tc := range tests {
		ref := day(tc.ref).Add(15 * time.Hour)
		for _, c := range []struct{ text, want string }{
			{"last Friday", tc.lastFri}, {"this Friday", tc.thisFri}, {"next Friday", tc.nextFri},
			{"last weekend", tc.lastWeekend}, {"this weekend", tc.thisWeekendSat},
		} {
			if got := first(c.text, ref); !got.Equal(day(c.want)) {
				t.Errorf("ref %s (%v): %q starts %s; want %s", tc.ref, ref.Weekday(), c.text, FormatDay(got), FormatDay(day(c.want)))
			}
		}
	}
}

func TestResolveDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// 12 March 2023 is the spring-forward day in New York (a 23-hour day).
	ref := time.Date(2023, 3, 13, 10, 0, 0, 0, ny)
	for _, text := range []string{"yesterday", "last weekend", "last week", "two days ago", "since 2016"} {
		for _, r := range Resolve(text, ref) {
			for _, tm := range []time.Time{r.Start, r.End} {
				if h, m, s := tm.Clock(); h != 0 || m != 0 || s != 0 || tm.Location() != ny {
					t.Errorf("%q: bound %v is not midnight in New York", text, tm)
				}
			}
		}
	}
	r := Resolve("yesterday", ref)[0]
	if r.End.Sub(r.Start) != 23*time.Hour {
		t.Errorf("yesterday across DST spans %v; want 23h", r.End.Sub(r.Start))
	}
}

func TestResolveZeroRef(t *testing.T) {
	refs := Resolve("we met in May 2022 and again last week", time.Time{})
	if len(refs) != 2 {
		t.Fatalf("got %+v", refs)
	}
	if refs[0].Kind != KindAbsolute || !refs[0].Start.Equal(day("2022-05-01")) {
		t.Errorf("absolute ref with zero reference: %+v", refs[0])
	}
	if refs[1].Kind == KindAbsolute {
		t.Errorf("relative ref must not be absolute: %+v", refs[1])
	}
}

func TestResolveNarrativeWindows(t *testing.T) {
	for _, text := range []string{"The next day we hiked", "on the last day of camp"} {
		if refs := Resolve(text, locomoRef); len(refs) != 0 {
			t.Errorf("Resolve(%q) = %+v; want none", text, refs)
		}
	}
}

func TestResolveFutureCues(t *testing.T) {
	// Real LoCoMo turns; the reference is Friday 4 August 2023 or Saturday
	// 28 October 2023.
	fri := time.Date(2023, 8, 4, 12, 0, 0, 0, time.UTC)
	sat := time.Date(2023, 10, 28, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		text  string
		ref   time.Time
		start string
		kind  Kind
	}{
		{"Hey, Audrey! I can't wait for the weekend.", fri, "2023-08-05", KindFuture},
		{"Yay! Does Saturday sound good?", sat, "2023-11-04", KindFuture},
		{"Saturday works for me!", sat, "2023-11-04", KindFuture},
		{"Because on Sunday I am going on a picnic date", sat, "2023-10-29", KindFuture},
		{"We had fun on Sunday.", sat, "2023-10-22", KindPast},
	}
	for _, tc := range tests {
		refs := Resolve(tc.text, tc.ref)
		if len(refs) != 1 || !refs[0].Start.Equal(day(tc.start)) || refs[0].Kind != tc.kind {
			t.Errorf("Resolve(%q, %s) = %+v; want start %s, %v", tc.text, FormatDay(tc.ref), refs, tc.start, tc.kind)
		}
	}
}
