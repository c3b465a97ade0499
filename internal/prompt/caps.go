package prompt

// Caps are what one rendering's data caps its reply at. The zero Caps
// (data that states none) means one item and as many ids as shown.
type Caps struct {
	// Items counts the turns the reply covers or selects from (the new
	// turns of BuildBatch, the turns shown to Predict, Filter and Select):
	// the n of MaxTokens.
	Items int
	// IDs is the most ids the reply may select (Predict and Select state
	// it); 0 means as many as shown.
	IDs int
}

// capper is prompt data that states caps for its reply.
type capper interface{ Caps() Caps }

// CapsOf returns the caps data states for its reply: data.Caps() for the
// data types that have the method, else the zero Caps.
func CapsOf(data any) Caps {
	if c, ok := data.(capper); ok {
		return c.Caps()
	}
	return Caps{}
}

// Caps returns the new turns the reply covers.
func (d BuildBatchData) Caps() Caps { return Caps{Items: len(d.New)} }

// Caps returns the turns shown and the most the reply may pick.
func (d PredictData) Caps() Caps { return Caps{Items: len(d.Turns), IDs: d.Max} }

// Caps returns the turns shown.
func (d FilterData) Caps() Caps { return Caps{Items: len(d.Turns)} }

// Caps returns the turns shown, the events' and the loose ones, and the
// most the reply may pick.
func (d SelectData) Caps() Caps {
	n := len(d.Turns)
	for _, e := range d.Events {
		n += len(e.Turns)
	}
	return Caps{Items: n, IDs: d.Max}
}
