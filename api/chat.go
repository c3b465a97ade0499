package api

// Headers of the OpenAI-compatible chat endpoint (POST /v1/chat/completions).
const (
	// HeaderAgent names the agent of the memory space a chat request reads
	// and writes (empty: the user's space without agent).
	HeaderAgent = "X-Higmem-Agent"
	// HeaderConversation names the conversation: its messages are stored
	// as turns of the session of that id, with ids derived from it. Without
	// it the id is derived from the conversation's first message.
	HeaderConversation = "X-Higmem-Conversation"
	// HeaderMemory set to "off" forwards a chat request untouched: no
	// evidence is added and nothing is stored.
	HeaderMemory = "X-Higmem-Memory"
	// HeaderWarning is set on a chat response that went on without memory
	// (retrieval failed or timed out); it says why.
	HeaderWarning = "X-Higmem-Warning"
	// HeaderEvidence is set on a chat response to the number of evidence
	// turns added to the request.
	HeaderEvidence = "X-Higmem-Evidence"
	// HeaderConversationID is set on a chat response to the conversation
	// id used (the header's value, or the derived one).
	HeaderConversationID = "X-Higmem-Conversation-Id"
)

// Error codes of the chat endpoint.
const (
	CodeRateLimited     = "rate_limit_exceeded" // 429: the key's chat rate limit
	CodeUpstream        = "upstream_error"      // 502: the upstream model could not be reached
	CodeChatUnavailable = "chat_not_configured" // 501: no upstream model endpoint is configured
)
