package offline

// The learned stage's weights for e5-small-v2 (stage.go), in raw units (the
// standardisation of the fit folded in), one per feature of StageFeatures.
// internal/research fits them on every question of LoCoMo and FriendsQA dev
// and writes this file:
//
//	go run ./internal/research/cmd/fitstage -locomo PATH -friendsqa PATH -model DIR -out internal/offline/stage_weights.go
var (
	stageE5Weights = [StageDim]float64{
		5.46471142,    // sr
		1.1883475,     // r2
		1.65470511,    // den
		-1.1691928,    // p1
		0.0245446494,  // n1
		-0.596955699,  // far
		0.898221296,   // p1·pq
		-0.0142326398, // n1·nq
		0.283882024,   // spk
		0.0144837529,  // qq
		0.674353287,   // dat
		0.560111103,   // cnt
		0.159972614,   // lw
		-1.60373302,   // sr²
		-0.095976964,  // same
		0.866271521,   // inv
		1.26772348,    // top10
		-0.283786756,  // log1p(rank)
	}
	stageE5Intercept = -8.10799989
)
