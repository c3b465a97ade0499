package temporal

import "time"

// Key orders turns chronologically: by occurred_at, then session, then
// sequence number within the session. A zero At means the time is unknown;
// such keys sort after every known time.
type Key struct {
	At      time.Time
	Session int
	Seq     int
}

// KeyOf builds a Key from a raw occurred_at string. An unparsable string
// gives an unknown (zero) time, so the turn sorts last instead of failing.
func KeyOf(raw string, loc *time.Location, session, seq int) Key {
	t, _, err := ParseTime(raw, loc)
	if err != nil {
		t = time.Time{}
	}
	return Key{At: t, Session: session, Seq: seq}
}

// Compare returns -1, 0 or +1 as a sorts before, with or after b: known
// instants first in chronological order, unknown times last, ties broken by
// Session and then Seq. It is a strict weak order usable with slices.SortFunc.
func Compare(a, b Key) int {
	az, bz := a.At.IsZero(), b.At.IsZero()
	switch {
	case az && !bz:
		return 1
	case !az && bz:
		return -1
	case !az:
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
	}
	switch {
	case a.Session != b.Session:
		return cmpInt(a.Session, b.Session)
	default:
		return cmpInt(a.Seq, b.Seq)
	}
}

// Less reports whether a sorts strictly before b (see Compare).
func Less(a, b Key) bool { return Compare(a, b) < 0 }

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
