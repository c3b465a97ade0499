package profile

import (
	"slices"
	"testing"
)

func TestAsked(t *testing.T) {
	attrs, past := Asked([]string{"where", "did", "she", "work", "before"})
	slices.Sort(attrs)
	if want := []string{Employer, Home, Job}; !slices.Equal(attrs, want) || !past {
		t.Fatalf("Asked = %v, %v; want %v, true", attrs, past, want)
	}
	if attrs, past := Asked([]string{"what", "is", "the", "weather"}); attrs != nil || past {
		t.Fatalf("Asked = %v, %v; want nil, false", attrs, past)
	}
}
