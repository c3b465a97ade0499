// Package chatfloor measures the relevance floor of the chat endpoint
// (server.chatRelevant, docs/CHAT.md): for memories built from the first
// sessions of dev conversations, which of their own questions and which
// everyday requests a rule lets memory through for. It is an experiment,
// not part of the product; its test runs only when asked:
//
//	HIGMEM_CHAT_FLOOR=1 HIGMEM_DATA_DIR=/path/to/shared/data \
//	  go test -run TestFloor -v -timeout 90m ./internal/research/chatfloor
package chatfloor
