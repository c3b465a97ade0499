package temporal

import "time"

// Calendar helpers. All of them build times with time.Date so that day
// arithmetic stays on midnight across daylight-saving changes.

func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

func addDays(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d+n, 0, 0, 0, 0, t.Location())
}

func monthStart(y int, m time.Month, loc *time.Location) time.Time {
	return time.Date(y, m, 1, 0, 0, 0, 0, loc)
}

func yearStart(y int, loc *time.Location) time.Time {
	return time.Date(y, time.January, 1, 0, 0, 0, 0, loc)
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// validDate reports whether y-m-d names a real calendar day.
func validDate(y int, m time.Month, d int) bool {
	return m >= time.January && m <= time.December && d >= 1 && d <= daysIn(y, m)
}

// weekStart returns the Monday starting the ISO week that contains day.
func weekStart(day time.Time) time.Time {
	return addDays(day, -((int(day.Weekday()) + 6) % 7))
}

// prevWeekday returns the most recent w strictly before day.
func prevWeekday(day time.Time, w time.Weekday) time.Time {
	k := (int(day.Weekday()) - int(w) + 7) % 7
	if k == 0 {
		k = 7
	}
	return addDays(day, -k)
}

// nextWeekday returns the first w on or after day (inclusive) or strictly
// after it.
func nextWeekday(day time.Time, w time.Weekday, inclusive bool) time.Time {
	k := (int(w) - int(day.Weekday()) + 7) % 7
	if k == 0 && !inclusive {
		k = 7
	}
	return addDays(day, k)
}

// saturdayOnOrBefore returns the Saturday of the weekend containing day, or
// the last Saturday before it.
func saturdayOnOrBefore(day time.Time) time.Time {
	return addDays(day, -((int(day.Weekday()) - int(time.Saturday) + 7) % 7))
}

func inWeekend(day time.Time) bool {
	w := day.Weekday()
	return w == time.Saturday || w == time.Sunday
}

// lastWeekend returns the Saturday of the most recent weekend that ended
// before day (a weekend containing day does not count).
func lastWeekend(day time.Time) time.Time {
	s := saturdayOnOrBefore(day)
	if inWeekend(day) {
		s = addDays(s, -7)
	}
	return s
}

// thisWeekend returns the Saturday of the weekend containing day, or of the
// coming weekend on a weekday.
func thisWeekend(day time.Time) time.Time {
	s := saturdayOnOrBefore(day)
	if !inWeekend(day) {
		s = addDays(s, 7)
	}
	return s
}

// nextWeekend returns the Saturday of the first weekend starting strictly
// after day.
func nextWeekend(day time.Time) time.Time {
	return nextWeekday(day, time.Saturday, false)
}

// seasonSpan returns the interval of season s in season year y.
func seasonSpan(s season, y int, loc *time.Location) (time.Time, time.Time) {
	m := seasonStart[s]
	return monthStart(y, m, loc), monthStart(y, m+3, loc)
}

// addUnits moves day by n units (negative for the past) as a calendar
// offset: days, weeks (7 days), weekends (7 days), months, years, decades.
func addUnits(day time.Time, u unit, n int) time.Time {
	switch u {
	case uDay:
		return addDays(day, n)
	case uWeek, uWeekend:
		return addDays(day, 7*n)
	case uMonth:
		return day.AddDate(0, n, 0)
	case uYear:
		return day.AddDate(n, 0, 0)
	case uDecade:
		return day.AddDate(10*n, 0, 0)
	}
	return day
}

func unitGran(u unit) Granularity {
	switch u {
	case uDay:
		return GranDay
	case uWeek, uWeekend:
		return GranWeek
	case uMonth:
		return GranMonth
	case uYear, uDecade:
		return GranYear
	}
	return GranUnknown
}

// unitWindow returns the unit-sized window k units before day (k < 0: after).
// Days are single days; weeks are the 7 days centred on day-7k; weekends are
// the Saturday–Sunday k weekends back (k = 1 is last weekend); months and
// years are calendar months and years; decades are the single year 10k back.
func unitWindow(day time.Time, u unit, k int) (time.Time, time.Time) {
	loc := day.Location()
	switch u {
	case uDay:
		s := addDays(day, -k)
		return s, addDays(s, 1)
	case uWeek:
		c := addDays(day, -7*k)
		return addDays(c, -3), addDays(c, 4)
	case uWeekend:
		var s time.Time
		if k >= 0 {
			s = addDays(lastWeekend(day), -7*(k-1))
		} else {
			s = addDays(thisWeekend(day), 7*(-k-1))
			if inWeekend(day) {
				s = addDays(s, 7)
			}
		}
		return s, addDays(s, 2)
	case uMonth:
		s := monthStart(day.Year(), day.Month()-time.Month(k), loc)
		return s, s.AddDate(0, 1, 0)
	case uYear:
		s := yearStart(day.Year()-k, loc)
		return s, yearStart(day.Year()-k+1, loc)
	case uDecade:
		s := yearStart(day.Year()-10*k, loc)
		return s, yearStart(day.Year()-10*k+1, loc)
	}
	return day, addDays(day, 1)
}
