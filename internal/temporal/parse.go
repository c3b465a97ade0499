package temporal

import (
	"fmt"
	"strings"
	"time"
)

// isoLayouts are tried, in order, on strings shaped like "YYYY-MM…".
var isoLayouts = [...]struct {
	layout string
	gran   Granularity
}{
	{time.RFC3339, GranSecond}, // also accepts fractional seconds
	{"2006-01-02T15:04:05", GranSecond},
	{"2006-01-02T15:04Z07:00", GranMinute},
	{"2006-01-02T15:04", GranMinute},
	{"2006-01-02 15:04:05Z07:00", GranSecond},
	{"2006-01-02 15:04:05 -0700 MST", GranSecond}, // time.Time.String
	{"2006-01-02 15:04:05 -0700", GranSecond},
	{"2006-01-02 15:04:05 MST", GranSecond},
	{"2006-01-02 15:04:05", GranSecond},
	{"2006-01-02 15:04Z07:00", GranMinute},
	{"2006-01-02 15:04", GranMinute},
	{"2006-01-02", GranDay},
	{"2006-01", GranMonth},
}

// ParseTime parses a caller-supplied timestamp (a turn's occurred_at). It
// accepts:
//
//   - LoCoMo's "1:56 pm on 8 May, 2023" and variants: no comma, any case,
//     month abbreviations ("Jun", "Sept"), ordinals ("8th"), "a.m."/"p.m.",
//     24-hour "13:56", the time after the date ("8 May 2023 at 1:56 pm") and
//     a leading weekday ("Monday, 8 May 2023");
//   - ISO 8601 / RFC 3339 with or without zone ("2023-05-08T13:56:00Z",
//     "2023-05-08T13:56", "2023-05-08 13:56", "2023-05-08", "2023-05") and
//     Go's time.Time.String form;
//   - "May 8, 2023", "8 May 2023", "May 2023" (month granularity);
//   - US slash dates "05/08/2023" (month/day/year) and "2023/05/08";
//   - all-digit strings: 4 digits are a year, 8 digits are ISO basic
//     "20230508", 9 to 12 digits are Unix seconds and 13 digits are Unix
//     milliseconds.
//
// Strings without a zone are read in loc; every result is returned in loc
// (nil means UTC). Relative words such as "yesterday" and dates without a
// year are not timestamps: they, and anything else not listed, yield
// ErrUnparsable (wrapped with the input, test with errors.Is).
func ParseTime(s string, loc *time.Location) (time.Time, Granularity, error) {
	if loc == nil {
		loc = time.UTC
	}
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 200 {
		return time.Time{}, GranUnknown, fmt.Errorf("temporal: parsing %q: %w", clip(s), ErrUnparsable)
	}
	t, g, ok := parseDigits(s, loc)
	if !ok {
		t, g, ok = parseISO(s, loc)
	}
	if !ok {
		t, g, ok = parseNatural(s, loc)
	}
	if !ok {
		return time.Time{}, GranUnknown, fmt.Errorf("temporal: parsing %q: %w", clip(s), ErrUnparsable)
	}
	return t, g, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func parseDigits(s string, loc *time.Location) (time.Time, Granularity, bool) {
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return time.Time{}, GranUnknown, false
		}
		if i < 18 {
			n = n*10 + int64(c-'0')
		}
	}
	switch l := len(s); {
	case l == 4:
		if n < 1000 {
			return time.Time{}, GranUnknown, false
		}
		return yearStart(int(n), loc), GranYear, true
	case l == 8:
		y, m, d := int(n/10000), time.Month(n/100%100), int(n%100)
		if y < 1000 || !validDate(y, m, d) {
			return time.Time{}, GranUnknown, false
		}
		return time.Date(y, m, d, 0, 0, 0, 0, loc), GranDay, true
	case l >= 9 && l <= 12:
		return time.Unix(n, 0).In(loc), GranSecond, true
	case l == 13:
		return time.UnixMilli(n).In(loc), GranMillisecond, true
	}
	return time.Time{}, GranUnknown, false
}

func parseISO(s string, loc *time.Location) (time.Time, Granularity, bool) {
	if len(s) < 7 || s[4] != '-' || !allDigits(s[:4]) {
		return time.Time{}, GranUnknown, false
	}
	for _, l := range isoLayouts {
		if t, err := time.ParseInLocation(l.layout, s, loc); err == nil {
			return t.In(loc), l.gran, true
		}
	}
	return time.Time{}, GranUnknown, false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// meridiem reads "am", "pm", "a.m." or "p.m." at toks[i]. It returns how many
// tokens it used (0 when there is none) and whether it is pm.
func meridiem(toks []token, i int) (n int, pm bool) {
	if i >= len(toks) || toks[i].kind != tWord {
		return 0, false
	}
	switch toks[i].key {
	case "am":
		return 1, false
	case "pm":
		return 1, true
	case "a", "p":
		if i+2 < len(toks) && toks[i+1].key == "." && toks[i+2].key == "m" {
			n = 3
			if i+3 < len(toks) && toks[i+3].key == "." {
				n = 4
			}
			return n, toks[i].key == "p"
		}
	}
	return 0, false
}

// parseNatural handles the tokenised forms: a date ("8 May 2023", "May 8,
// 2023", "May 2023", "5/8/2023", "2023/5/8") with an optional clock time
// before or after it and optional filler words.
func parseNatural(s string, loc *time.Location) (time.Time, Granularity, bool) {
	toks := tokenize(s)
	fail := func() (time.Time, Granularity, bool) { return time.Time{}, GranUnknown, false }
	isNum := func(i, maxDig int) bool {
		return i < len(toks) && toks[i].kind == tNum && !toks[i].ord && toks[i].ndig <= maxDig
	}
	isP := func(i int, p string) bool { return i < len(toks) && toks[i].kind == tPunct && toks[i].key == p }
	var (
		hasTime    bool
		hh, mm, ss int
		tgran      Granularity
		rest       [8]token
		nrest      int
		utc        bool
	)
	for i := 0; i < len(toks); {
		t := toks[i]
		if !hasTime && isNum(i, 2) && (isP(i+1, ":") && isNum(i+2, 2) && toks[i+2].ndig == 2 || meridiemAt(toks, i+1)) {
			hour, min_, sec_ := t.num, int64(0), int64(0)
			j := i + 1
			tgran = GranHour
			if isP(j, ":") {
				min_ = toks[j+1].num
				j += 2
				tgran = GranMinute
				if isP(j, ":") && isNum(j+1, 2) && toks[j+1].ndig == 2 {
					sec_ = toks[j+1].num
					j += 2
					tgran = GranSecond
				}
			}
			n, pm := meridiem(toks, j)
			if n > 0 {
				if hour < 1 || hour > 12 {
					return fail()
				}
				hour %= 12
				if pm {
					hour += 12
				}
				j += n
			} else if hour > 23 {
				return fail()
			}
			if min_ > 59 || sec_ > 59 {
				return fail()
			}
			hh, mm, ss = int(hour), int(min_), int(sec_)
			hasTime = true
			i = j
			continue
		}
		switch {
		case t.kind == tPunct && (t.key == "," || t.key == "."):
		case t.kind == tWord && (t.key == "on" || t.key == "at" || t.key == "the" || t.key == "of"):
		case t.kind == tWord && isFullWeekday(t.key):
		case t.kind == tWord && (t.key == "utc" || t.key == "gmt" || t.key == "z"):
			utc = true
		default:
			if nrest == len(rest) {
				return fail()
			}
			rest[nrest] = t
			nrest++
		}
		i++
	}
	y, m, d, g, ok := dateTokens(rest[:nrest])
	if !ok {
		return fail()
	}
	if hasTime {
		if g != GranDay {
			return fail()
		}
		g = tgran
	}
	zone := loc
	if utc {
		zone = time.UTC
	}
	return time.Date(y, m, d, hh, mm, ss, 0, zone).In(loc), g, true
}

func meridiemAt(toks []token, i int) bool {
	n, _ := meridiem(toks, i)
	return n > 0
}

// dateTokens matches the whole token list against the supported date shapes.
func dateTokens(ts []token) (y int, m time.Month, d int, g Granularity, ok bool) {
	month := func(t token) (time.Month, bool) {
		if t.kind != tWord {
			return 0, false
		}
		mo, ok := monthWords[t.key]
		return mo, ok
	}
	day := func(t token) (int, bool) {
		if t.kind != tNum || t.ndig > 2 || t.num < 1 || t.num > 31 {
			return 0, false
		}
		return int(t.num), true
	}
	year := func(t token) (int, bool) {
		if t.kind != tNum || t.ndig != 4 || t.ord || t.num < 1000 {
			return 0, false
		}
		return int(t.num), true
	}
	plain := func(t token) bool { return t.kind == tNum && !t.ord }
	switch len(ts) {
	case 2: // May 2023
		if mo, ok1 := month(ts[0]); ok1 {
			if yy, ok2 := year(ts[1]); ok2 {
				return yy, mo, 1, GranMonth, true
			}
		}
	case 3:
		if dd, ok1 := day(ts[0]); ok1 { // 8 May 2023
			if mo, ok2 := month(ts[1]); ok2 {
				if yy, ok3 := year(ts[2]); ok3 && validDate(yy, mo, dd) {
					return yy, mo, dd, GranDay, true
				}
			}
		}
		if mo, ok1 := month(ts[0]); ok1 { // May 8 2023
			if dd, ok2 := day(ts[1]); ok2 {
				if yy, ok3 := year(ts[2]); ok3 && validDate(yy, mo, dd) {
					return yy, mo, dd, GranDay, true
				}
			}
		}
	case 5: // 5/8/2023 (US) or 2023/5/8
		if ts[1].key != "/" || ts[3].key != "/" || ts[1].kind != tPunct || ts[3].kind != tPunct ||
			!plain(ts[0]) || !plain(ts[2]) || !plain(ts[4]) {
			return
		}
		if yy, ok1 := year(ts[0]); ok1 && ts[2].ndig <= 2 && ts[4].ndig <= 2 {
			mo, dd := time.Month(ts[2].num), int(ts[4].num)
			if validDate(yy, mo, dd) {
				return yy, mo, dd, GranDay, true
			}
			return
		}
		if yy, ok1 := year(ts[4]); ok1 && ts[0].ndig <= 2 && ts[2].ndig <= 2 {
			mo, dd := time.Month(ts[0].num), int(ts[2].num)
			if validDate(yy, mo, dd) {
				return yy, mo, dd, GranDay, true
			}
		}
	}
	return
}
