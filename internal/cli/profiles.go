package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/api"
)

// profilesOptions are the flags of `higmem profiles`.
type profilesOptions struct {
	asOf    string
	current bool
}

func newProfilesCommand(a *app) *cobra.Command {
	var o profilesOptions
	cmd := &cobra.Command{
		Use:   "profiles [ENTITY]",
		Short: "Show what memory knows about each person, and how it changed",
		Long: `Profiles prints what the turns of the space say about each person (the speakers, and
people a speaker names, as in "my sister Ana"): where they live, their job and employer,
pets, partner and relationship status, favourites and plans. Each value lists the
turns that state it and when it held; a value that changed is shown closed, with the
turn that ended it. Values a model stated (default and paper mode) name their producers
("by llm:default:p3"); values only the offline rules read name none. With ENTITY only
that person (a unique first name works). With
--json it prints the REST response: {"profiles": [...]} for all, one profile for ENTITY.`,
		Example: `  higmem profiles
  higmem profiles Priya --as-of 2023-05-01`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: noCreate,
		RunE: func(cmd *cobra.Command, args []string) error {
			entity := ""
			if len(args) == 1 {
				entity = args[0]
			}
			return profilesFunc(cmd, a, o, entity)
		},
	}
	cmd.Flags().StringVar(&o.asOf, "as-of", "", "only the values that held at this time of the conversation (RFC 3339 or YYYY-MM-DD)")
	cmd.Flags().BoolVar(&o.current, "current", false, "print only the values that hold now (text output)")
	return cmd
}

// profilesFunc prints the profiles of the space, or the one of entity.
func profilesFunc(cmd *cobra.Command, a *app, o profilesOptions, entity string) error {
	var asOf time.Time
	if o.asOf != "" {
		t, err := time.Parse(time.RFC3339, o.asOf)
		if err != nil {
			if t, err = time.Parse(time.DateOnly, o.asOf); err != nil {
				return fmt.Errorf("--as-of: want an RFC 3339 time or a date YYYY-MM-DD, got %q", o.asOf)
			}
		}
		asOf = t
	}
	if entity != "" {
		return answer(cmd, a, func(ctx context.Context, m memoryAPI, sc api.Scope) (*api.Profile, error) {
			return m.Profile(ctx, api.ProfilesRequest{Scope: sc, Entity: entity, AsOf: asOf})
		},
			func(w io.Writer, p *api.Profile) { printProfile(w, *p, o.current) })
	}
	return answer(cmd, a, func(ctx context.Context, m memoryAPI, sc api.Scope) (*api.ProfileList, error) {
		return m.Profiles(ctx, api.ProfilesRequest{Scope: sc, AsOf: asOf})
	},
		func(w io.Writer, l *api.ProfileList) {
			if len(l.Profiles) == 0 {
				fmt.Fprintf(w, "no profiles in space %s (ingest a conversation first)\n", describeScope(a.scope()))
			}
			for _, p := range l.Profiles {
				printProfile(w, p, o.current)
			}
		})
}

// printProfile prints one profile: a line per value, the current ones
// marked "now", the closed ones with the turn that closed them.
func printProfile(w io.Writer, p api.Profile, currentOnly bool) {
	who := "speaker"
	if !p.Speaker {
		who = "named by a speaker"
	}
	fmt.Fprintf(w, "%s (%s)\n", safe(p.Entity), who)
	if s := p.Summary; s != nil {
		fmt.Fprintf(w, "    summary:         %s  [%s] by %s\n", safe(s.Text), safeJoin(s.Evidence, " "), safe(s.Producer))
	}
	if len(p.Attributes) == 0 {
		fmt.Fprintln(w, "    nothing known")
	}
	for _, at := range p.Attributes {
		label := at.Name
		if at.Key != "" {
			label += " " + at.Key
		}
		for _, v := range at.Values {
			if currentOnly && !v.Current {
				continue
			}
			span := day(v.ValidFrom) + ".."
			if v.Current {
				span += "now"
			} else {
				by := ""
				if v.ClosedByProducer != "" && v.ClosedByProducer != "rules" {
					by = " per " + safe(v.ClosedByProducer)
				}
				span += day(v.ValidTo) + " (ended by " + safe(v.ClosedBy) + by + ")"
			}
			producers := ""
			if len(v.Producers) > 0 && (len(v.Producers) > 1 || v.Producers[0] != "rules") {
				producers = " by " + safeJoin(v.Producers, ", ")
			}
			fmt.Fprintf(w, "    %-16s %-24s %s  [%s]%s\n", safe(label)+":", safe(v.Value), span, safeJoin(v.Evidence, " "), producers)
		}
	}
}

// day formats a date, "?" when unknown.
func day(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return strings.TrimSpace(t.Format(time.DateOnly))
}
