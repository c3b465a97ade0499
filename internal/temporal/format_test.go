package temporal

import (
	"testing"
	"time"
)

func TestFormatDay(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{locomoRef, "8 May 2023"},
		{time.Date(2022, 12, 31, 23, 59, 0, 0, time.UTC), "31 December 2022"},
		{time.Date(2024, 1, 1, 0, 0, 0, 0, time.FixedZone("X", 5*3600)), "1 January 2024"},
		{time.Time{}, ""},
	}
	for _, tc := range tests {
		if got := FormatDay(tc.in); got != tc.want {
			t.Errorf("FormatDay(%v) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		r    Ref
		want string
	}{
		{Ref{Text: "last week", Start: day("2023-05-01"), End: day("2023-05-08")}, "last week (1–7 May 2023)"},
		{Ref{Text: "yesterday", Start: day("2023-05-07"), End: day("2023-05-08")}, "yesterday (7 May 2023)"},
		{Ref{Text: "last weekend", Start: day("2023-04-29"), End: day("2023-05-01")}, "last weekend (29–30 April 2023)"},
		{Ref{Text: "two weeks ago", Start: day("2023-04-27"), End: day("2023-05-04")}, "two weeks ago (27 April – 3 May 2023)"},
		{Ref{Text: "the holidays", Start: day("2022-12-24"), End: day("2023-01-02")}, "the holidays (24 December 2022 – 1 January 2023)"},
		{Ref{Text: "next month", Start: day("2023-06-01"), End: day("2023-07-01")}, "next month (June 2023)"},
		{Ref{Text: "last summer", Start: day("2022-06-01"), End: day("2022-09-01")}, "last summer (June – August 2022)"},
		{Ref{Text: "this winter", Start: day("2022-12-01"), End: day("2023-03-01")}, "this winter (December 2022 – February 2023)"},
		{Ref{Text: "in 2022", Start: day("2022-01-01"), End: day("2023-01-01")}, "in 2022 (2022)"},
		{Ref{Text: "a few years ago", Start: day("2019-01-01"), End: day("2022-01-01"), Fuzzy: true}, "a few years ago (~2019–2021)"},
		{Ref{Text: "since 2016", Start: day("2016-01-01"), End: day("2023-05-09")}, "since 2016 (1 January 2016 – 8 May 2023)"},
		{Ref{Start: day("2023-05-07"), End: day("2023-05-08")}, "7 May 2023"},
		{Ref{Text: "sometime"}, "sometime"},
		{Ref{}, ""},
	}
	for _, tc := range tests {
		if got := Describe(tc.r); got != tc.want {
			t.Errorf("Describe(%+v) = %q; want %q", tc.r, got, tc.want)
		}
	}
}

func TestIntervalMethods(t *testing.T) {
	may := Interval{Start: day("2023-05-01"), End: day("2023-06-01")}
	if !may.Contains(locomoRef) || may.Contains(day("2023-06-01")) || !may.Contains(day("2023-05-01")) {
		t.Error("Contains must be half-open")
	}
	june := Interval{Start: day("2023-06-01"), End: day("2023-07-01")}
	if may.Overlaps(june) || !may.Overlaps(Interval{Start: day("2023-05-31"), End: day("2023-06-02")}) {
		t.Error("Overlaps must be half-open")
	}
	if (Interval{}).String() != "" || !(Interval{}).IsZero() || may.IsZero() {
		t.Error("zero interval")
	}
	odd := Interval{Start: locomoRef, End: locomoRef.Add(time.Hour)}
	if got := odd.String(); got != "2023-05-08T13:56:00Z – 2023-05-08T14:56:00Z" {
		t.Errorf("non-midnight interval = %q", got)
	}
}
