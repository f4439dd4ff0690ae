package openai_test

import (
	"context"
	"fmt"

	"github.com/dshd/dshd/agent/llm"
	"github.com/dshd/dshd/agent/llm/openai"
	"github.com/dshd/dshd/agent/llm/openai/openaitest"
)

func ExampleClient_Stream() {
	srv := openaitest.New()
	defer srv.Close()
	srv.Enqueue(
		openaitest.Status(429), // retried: nothing was streamed yet
		openaitest.Reply{Reasoning: []string{"", "Short answer."}, Text: []string{"Hel", "lo"}},
	)

	opts := openai.DeepSeek()
	opts.BaseURL = srv.URL()
	opts.RetryBaseDelay = 1 // keep the example fast
	c, err := openai.New(opts)
	if err != nil {
		panic(err)
	}
	defer c.CloseIdleConnections()

	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Say hello."}}}
	msg, _, finish, err := llm.Collect(c.Stream(context.Background(), req))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s / %s / %s\n", *msg.Reasoning, msg.Content, finish)
	// The 429 and the retry both reached the server:
	fmt.Println(len(srv.ChatRequests()), "requests")
	// Output:
	// Short answer. / Hello / stop
	// 2 requests
}
