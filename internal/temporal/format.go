package temporal

import (
	"strconv"
	"time"
)

// dayLayout is the one date format shown to answer models.
const dayLayout = "2 January 2006"

// FormatDay formats t as "8 May 2023" in t's own location. The zero time
// formats as the empty string.
func FormatDay(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	y, m, d := t.Date()
	return string(appendDay(make([]byte, 0, 24), y, m, d))
}

// appendDay appends the day y-m-d as t.Format(dayLayout) writes it: the
// day without padding, the month's English name, the year padded to four
// digits, a minus before a negative one. It skips Format's reading of the
// layout.
func appendDay(b []byte, y int, m time.Month, d int) []byte {
	b = strconv.AppendInt(b, int64(d), 10)
	b = append(b, ' ')
	b = append(b, m.String()...)
	b = append(b, ' ')
	u := uint64(y)
	if y < 0 {
		b = append(b, '-')
		u = uint64(-y)
	}
	for p := uint64(1000); p > 1 && u < p; p /= 10 {
		b = append(b, '0')
	}
	return strconv.AppendUint(b, u, 10)
}

// Describe renders r compactly for evidence lines: the matched text followed
// by the resolved dates, e.g. "last week (1–7 May 2023)", "in 2022 (2022)",
// "recently (~8 April – 8 May 2023)". Fuzzy ranges are prefixed with "~".
// A Ref without text renders as its range alone.
func Describe(r Ref) string {
	rng := formatRange(r.Start, r.End)
	if r.Fuzzy && rng != "" {
		rng = "~" + rng
	}
	switch {
	case r.Text == "":
		return rng
	case rng == "":
		return r.Text
	}
	return r.Text + " (" + rng + ")"
}

// formatRange formats [start, end) with day precision. Whole years render as
// "2022" or "2016–2018", whole months as "May 2023" or "June – August 2022",
// and day ranges as "8 May 2023", "1–7 May 2023", "29 April – 5 May 2023" or
// "30 December 2022 – 2 January 2023" (the end day is inclusive in the text).
// Intervals not aligned to midnight fall back to RFC 3339.
func formatRange(start, end time.Time) string {
	if start.IsZero() && end.IsZero() {
		return ""
	}
	return string(AppendRange(make([]byte, 0, 40), start, end))
}

// AppendRange appends formatRange(start, end) to b, without the strings
// formatRange's pieces would each take.
func AppendRange(b []byte, start, end time.Time) []byte {
	if start.IsZero() && end.IsZero() {
		return b
	}
	if !end.After(start) {
		return appendDayOf(b, start)
	}
	if !isMidnight(start) || !isMidnight(end) {
		b = start.AppendFormat(b, time.RFC3339)
		b = append(b, " – "...)
		return end.AppendFormat(b, time.RFC3339)
	}
	sy, sm, sd := start.Date()
	ey, em, ed := end.Date()
	if sd == 1 && ed == 1 {
		if sm == time.January && em == time.January {
			b = strconv.AppendInt(b, int64(sy), 10)
			if ey == sy+1 {
				return b
			}
			b = append(b, "–"...)
			return strconv.AppendInt(b, int64(ey-1), 10)
		}
		last := end.AddDate(0, -1, 0)
		ly, lm, _ := last.Date()
		b = append(b, sm.String()...)
		switch {
		case ly == sy && lm == sm:
		case ly == sy:
			b = append(b, " – "...)
			b = append(b, lm.String()...)
		default:
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(sy), 10)
			b = append(b, " – "...)
			b = append(b, lm.String()...)
			sy = ly
		}
		b = append(b, ' ')
		return strconv.AppendInt(b, int64(sy), 10)
	}
	last := addDays(end, -1)
	ly, lm, ld := last.Date()
	switch {
	case ly == sy && lm == sm && ld == sd:
		return appendDayOf(b, start)
	case ly == sy && lm == sm:
		b = strconv.AppendInt(b, int64(sd), 10)
		b = append(b, "–"...)
	case ly == sy:
		b = strconv.AppendInt(b, int64(sd), 10)
		b = append(b, ' ')
		b = append(b, sm.String()...)
		b = append(b, " – "...)
	default:
		b = appendDayOf(b, start)
		b = append(b, " – "...)
	}
	if last.IsZero() {
		return b
	}
	return appendDay(b, ly, lm, ld)
}

// appendDayOf appends FormatDay(t).
func appendDayOf(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	y, m, d := t.Date()
	return appendDay(b, y, m, d)
}

func isMidnight(t time.Time) bool {
	h, m, s := t.Clock()
	return h == 0 && m == 0 && s == 0 && t.Nanosecond() == 0
}
