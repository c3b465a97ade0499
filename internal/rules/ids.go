package rules

import (
	"slices"
	"strconv"
	"strings"

	"github.com/higmem/higmem/store"
)

// EventNumber returns n for an event id "e<n>", else 0.
func EventNumber(id string) int {
	if !strings.HasPrefix(id, "e") {
		return 0
	}
	n, err := strconv.Atoi(id[1:])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// SameTurn reports whether two turns say the same thing (the fields a
// caller gives). Seq and RecordedAt are not compared.
func SameTurn(a, b store.Turn) bool {
	return a.ID == b.ID && a.Speaker == b.Speaker && a.Text == b.Text && a.SessionID == b.SessionID &&
		a.OccurredRaw == b.OccurredRaw && slices.Equal(a.Attachments, b.Attachments)
}
