package temporal

import (
	"testing"
	"time"
)

// TestResolveDirection checks which occurrence a date, month, weekday,
// weekend, season or "the 15th" without a year resolves to: forward on
// present, progressive and future phrasing, back on past phrasing, the
// nearest one without a cue. Most cases are chosen so that the nearest
// occurrence is the wrong answer, so the cue is what is being tested.
func TestResolveDirection(t *testing.T) {
	tests := []struct {
		ref        string // the day the sentence was said (at noon UTC)
		text, span string
		start, end string // the resolved half-open interval
	}{
		// Forward: present, progressive and future phrasing.
		{"2024-03-02", "That's great. I started training for the Riverside half marathon. It's on May 19, so I have eleven weeks.", "May 19", "2024-05-19", "2024-05-20"},
		{"2024-05-25", "And more news: I got the Windrose job! I start on June 3.", "June 3", "2024-06-03", "2024-06-04"},
		{"2024-03-02", "Also, my sister Anna is getting married in June, in Porto.", "in June", "2024-06-01", "2024-07-01"},
		{"2024-05-25", "The wedding is on June 15 at a vineyard outside Porto.", "June 15", "2024-06-15", "2024-06-16"},
		{"2024-03-02", "My birthday is on March 1.", "March 1", "2025-03-01", "2025-03-02"},
		{"2024-03-02", "I'll be in Lisbon in February.", "in February", "2025-02-01", "2025-03-01"},
		{"2024-03-02", "I'm going to visit my parents on the 1st.", "on the 1st", "2024-04-01", "2024-04-02"},
		{"2024-03-02", "Can't wait for our trip in January!", "in January", "2025-01-01", "2025-02-01"},
		{"2024-03-02", "We're planning a party for December 12.", "December 12", "2024-12-12", "2024-12-13"},
		{"2024-03-02", "The exam is on Friday.", "on Friday", "2024-03-08", "2024-03-09"},
		{"2024-03-02", "My flight leaves on February 28.", "February 28", "2025-02-28", "2025-03-01"},
		{"2024-03-05", "I have a dentist appointment on Monday.", "on Monday", "2024-03-11", "2024-03-12"},
		{"2024-03-05", "Hopefully the weather holds until Sunday.", "Sunday", "2024-03-10", "2024-03-11"},
		{"2024-03-03", "Are you free on Saturday?", "on Saturday", "2024-03-09", "2024-03-10"},
		{"2024-03-01", "See you on Thursday!", "on Thursday", "2024-03-07", "2024-03-08"},
		{"2024-07-01", "I'd love to go to Japan in the spring.", "in the spring", "2025-03-01", "2025-06-01"},
		{"2024-03-04", "What are you doing over the weekend?", "over the weekend", "2024-03-09", "2024-03-11"},
		{"2024-03-04", "In five days, on Saturday, the reunion.", "on Saturday", "2024-03-09", "2024-03-10"},
		{"2024-03-02", "I got a kid starting college in the fall.", "in the fall", "2024-09-01", "2024-12-01"},
		{"2024-05-20", "I was thrilled, so we're going back in March.", "back in March", "2025-03-01", "2025-04-01"},
		{"2024-06-01", "I loved the race, which is on May 19.", "May 19", "2025-05-19", "2025-05-20"},
		{"2024-06-01", "I'll be back on May 19.", "May 19", "2025-05-19", "2025-05-20"},
		// A weak cue ("for", "until", "by" just before) decides when nothing else does.
		{"2024-03-02", "Tickets for March 1, please.", "March 1", "2025-03-01", "2025-03-02"},
		{"2024-03-02", "Counting down the days until Friday!", "Friday", "2024-03-08", "2024-03-09"},

		// Back: past phrasing.
		{"2024-03-02", "It was on May 19.", "May 19", "2023-05-19", "2023-05-20"},
		{"2024-03-02", "I went to Porto in June.", "in June", "2023-06-01", "2023-07-01"},
		{"2024-03-02", "I finished the race on May 19 in under two hours.", "May 19", "2023-05-19", "2023-05-20"},
		{"2024-03-02", "Back in August, I adopted a cat.", "Back in August", "2023-08-01", "2023-09-01"},
		{"2024-05-20", "We had a great trip to Rome in November.", "in November", "2023-11-01", "2023-12-01"},
		{"2024-03-06", "On Friday, I got great news.", "On Friday", "2024-03-01", "2024-03-02"},
		{"2024-03-08", "We spent the weekend at the lake.", "the weekend", "2024-03-02", "2024-03-04"},
		{"2024-03-05", "Two weeks ago, on Thursday, my car broke down.", "on Thursday", "2024-02-29", "2024-03-01"},
		{"2024-03-02", "How was the concert on March 3?", "March 3", "2023-03-03", "2023-03-04"},
		{"2024-03-07", "I didn't go out on Saturday.", "on Saturday", "2024-03-02", "2024-03-03"},
		{"2024-05-20", "I remember the storm in September.", "in September", "2023-09-01", "2023-10-01"},
		{"2024-06-20", "We used to live there, we moved out in December.", "in December", "2023-12-01", "2024-01-01"},
		{"2024-03-02", "I've been to Porto in the summer.", "in the summer", "2023-06-01", "2023-09-01"},
		{"2024-03-02", "I've had this scar since June.", "since June", "2023-06-01", "2024-03-03"},
		{"2024-03-06", "What did you do on Friday?", "on Friday", "2024-03-01", "2024-03-02"},
		{"2024-03-06", "Did you have fun on Saturday?", "on Saturday", "2024-03-02", "2024-03-03"},
		{"2024-03-02", "Have you been to Paris in June?", "in June", "2023-06-01", "2023-07-01"},
		// The clause decides, not the turn: a past sentence before does not leak.
		{"2024-03-02", "I signed up last week. The race is on May 19.", "May 19", "2024-05-19", "2024-05-20"},
		{"2024-06-01", "The race is great, but it was on May 19 this time.", "May 19", "2024-05-19", "2024-05-20"},
		{"2024-03-02", "- We went to Porto - it's in June again!", "in June", "2024-06-01", "2024-07-01"},
		{"2024-03-20", "On the 1st we celebrate, because it was a hard year.", "On the 1st", "2024-04-01", "2024-04-02"}, // "was" is in another clause; nearest

		// No cue: the nearest occurrence.
		{"2024-03-02", "Riverside half marathon, May 19.", "May 19", "2024-05-19", "2024-05-20"},
		{"2024-08-01", "The Riverside race: May 19.", "May 19", "2024-05-19", "2024-05-20"},
		{"2024-05-25", "June 3 at the new office.", "June 3", "2024-06-03", "2024-06-04"},
		{"2024-03-02", "Beach trip in the summer.", "in the summer", "2024-06-01", "2024-09-01"},
		{"2024-03-04", "Any news over the weekend?", "over the weekend", "2024-03-02", "2024-03-04"},
		{"2024-03-07", "Any news over the weekend?", "over the weekend", "2024-03-09", "2024-03-11"},
		{"2024-03-06", "Pottery class on Friday?", "on Friday", "2024-03-08", "2024-03-09"},
		{"2024-03-04", "Pottery class on Friday?", "on Friday", "2024-03-01", "2024-03-02"},
		{"2024-03-06", "Pottery class on Wednesday?", "on Wednesday", "2024-02-28", "2024-02-29"}, // a tie goes to the past

		// Year wrap, December ↔ January.
		{"2023-12-28", "Dinner with Sam on January 2.", "January 2", "2024-01-02", "2024-01-03"},
		{"2023-12-28", "New gym classes in January.", "in January", "2024-01-01", "2024-02-01"},
		{"2023-12-28", "We skied in January.", "in January", "2023-01-01", "2023-02-01"},
		{"2024-01-03", "Mom's birthday, December 30.", "December 30", "2023-12-30", "2023-12-31"},
		{"2024-01-03", "We'll decorate in December.", "in December", "2024-12-01", "2025-01-01"},
		{"2024-01-03", "We met on December 30.", "December 30", "2023-12-30", "2023-12-31"},

		// The reference's own day and month are both the last and the next.
		{"2024-03-02", "It's on March 2.", "March 2", "2024-03-02", "2024-03-03"},
		{"2024-03-02", "It was on March 2.", "March 2", "2024-03-02", "2024-03-03"},
		{"2024-05-20", "We planted the garden in May.", "in May", "2024-05-01", "2024-06-01"},
		{"2024-05-20", "We'll plant the garden in May.", "in May", "2024-05-01", "2024-06-01"},
		{"2024-05-20", "The garden in May.", "in May", "2024-05-01", "2024-06-01"},
		{"2024-03-02", "I'll call on the 2nd.", "on the 2nd", "2024-03-02", "2024-03-03"},

		// Leap day: the nearest leap year in the direction asked.
		{"2025-01-10", "Her birthday is on February 29.", "February 29", "2028-02-29", "2028-03-01"},
		{"2025-01-10", "She was born on February 29.", "February 29", "2024-02-29", "2024-03-01"},
		{"2024-03-01", "Leap day, February 29.", "February 29", "2024-02-29", "2024-03-01"},
		{"2027-12-01", "Leap day, February 29.", "February 29", "2028-02-29", "2028-03-01"},
	}
	for _, tc := range tests {
		t.Run(tc.ref+" "+tc.text, func(t *testing.T) {
			ref := day(tc.ref).Add(12 * time.Hour)
			var got *Ref
			for _, r := range Resolve(tc.text, ref) {
				if r.Text == tc.span {
					got = &r
				}
			}
			if got == nil {
				t.Fatalf("Resolve(%q, %s) = %+v; no ref %q", tc.text, tc.ref, Resolve(tc.text, ref), tc.span)
			}
			want := Interval{Start: day(tc.start), End: day(tc.end)}
			if got.Interval() != want {
				t.Errorf("Resolve(%q, %s): %q = %s; want %s", tc.text, tc.ref, tc.span, got.Interval(), want)
			}
			wantKind := KindPresent
			switch refDay := day(tc.ref); {
			case !want.End.After(refDay):
				wantKind = KindPast
			case want.Start.After(refDay):
				wantKind = KindFuture
			}
			if got.Kind != wantKind && got.Kind != KindDuration {
				t.Errorf("%q: kind %v; want %v", tc.span, got.Kind, wantKind)
			}
		})
	}
}
