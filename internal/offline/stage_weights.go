package offline

// The learned stage's weights for e5-small-v2 (offline_stage.go), in raw
// units (the standardisation of the fit folded in), one per feature of
// StageFeatures. TestOfflineCVStage fits them on every conversation of
// LoCoMo and FriendsQA dev, logs them in this form and fails when these
// differ from its fit:
//
//	HIGMEM_DATA_DIR=../shared/data HIGMEM_OFFLINE_CV=1 HIGMEM_CV_LEXB=1 HIGMEM_CV_WINDOWS=none \
//	  HIGMEM_TEST_MODEL_DIR=<models>/e5-small-v2 HIGMEM_EMBED_CACHE=<cache> \
//	  go test -count=1 -run 'TestOfflineCVStage$' -v .
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
