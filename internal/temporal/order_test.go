package temporal

import (
	"slices"
	"testing"
	"time"
)

// TestCompareFixesReferenceSort is the reference implementation's failure
// (reference-higmem.md §10): it sorted the raw strings, which puts
// "10:37 am on 27 June, 2023" before "1:56 pm on 8 May, 2023".
func TestCompareFixesReferenceSort(t *testing.T) {
	may := "1:56 pm on 8 May, 2023"
	june := "10:37 am on 27 June, 2023"
	if !(june < may) {
		t.Fatal("premise: the raw strings sort June first")
	}
	a := KeyOf(may, time.UTC, 1, 0)
	b := KeyOf(june, time.UTC, 4, 0)
	if !Less(a, b) || Less(b, a) || Compare(b, a) != 1 {
		t.Errorf("27 June must sort after 8 May: Compare(may, june) = %d", Compare(a, b))
	}
}

func TestCompareSort(t *testing.T) {
	keys := []Key{
		KeyOf("not a date", time.UTC, 2, 1),
		KeyOf("10:37 am on 27 June, 2023", time.UTC, 4, 3),
		KeyOf("1:56 pm on 8 May, 2023", time.UTC, 1, 2),
		KeyOf("", time.UTC, 1, 5),
		KeyOf("10:37 am on 27 June, 2023", time.UTC, 4, 1),
		KeyOf("12:06 am on 11 November, 2022", time.UTC, 9, 0),
		KeyOf("1:56 pm on 8 May, 2023", time.UTC, 1, 1),
		KeyOf("2023-05-08T13:56:00+02:00", time.UTC, 0, 0), // 11:56 UTC, earlier the same day
	}
	slices.SortStableFunc(keys, Compare)
	type sk struct{ session, seq int }
	var got []sk
	for _, k := range keys {
		got = append(got, sk{k.Session, k.Seq})
	}
	want := []sk{{9, 0}, {0, 0}, {1, 1}, {1, 2}, {4, 1}, {4, 3}, {1, 5}, {2, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("sorted = %v; want %v", got, want)
	}
	for i := range keys {
		if Compare(keys[i], keys[i]) != 0 {
			t.Errorf("Compare(k, k) != 0 for %+v", keys[i])
		}
	}
}

func TestCompareInstantsAcrossZones(t *testing.T) {
	a := Key{At: time.Date(2023, 5, 8, 12, 0, 0, 0, time.UTC), Session: 2}
	b := Key{At: time.Date(2023, 5, 8, 14, 0, 0, 0, time.FixedZone("CEST", 2*3600)), Session: 1}
	if Compare(a, b) != 1 { // same instant: session decides
		t.Errorf("same instant must fall back to session: %d", Compare(a, b))
	}
}
