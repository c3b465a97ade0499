package llmtest

import "github.com/higmem/higmem/llm/llmfake"

// The fakes of llm/llmfake under the names tests have always used, so that
// a test needs only this package.
type (
	ChatRequest = llmfake.ChatRequest
	Reply       = llmfake.Reply
	Handler     = llmfake.Handler
	Scripted    = llmfake.Scripted
	Junk        = llmfake.Junk
	RealJunk    = llmfake.RealJunk
	JunkShape   = llmfake.JunkShape
)

// The constructors and handlers of llm/llmfake; see there.
var (
	NewScripted          = llmfake.NewScripted
	JunkShapes           = llmfake.JunkShapes
	SchemaAt             = llmfake.SchemaAt
	Text                 = llmfake.Text
	JSON                 = llmfake.JSON
	Status               = llmfake.Status
	RateLimited          = llmfake.RateLimited
	ServerError          = llmfake.ServerError
	Garbage              = llmfake.Garbage
	EmptyChoices         = llmfake.EmptyChoices
	Slow                 = llmfake.Slow
	Sequence             = llmfake.Sequence
	Always               = llmfake.Always
	RejectResponseFormat = llmfake.RejectResponseFormat
	OpenAIStrictSchemas  = llmfake.OpenAIStrictSchemas
)
