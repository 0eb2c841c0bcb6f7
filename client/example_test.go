package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"wilco/client"
	"wilco/wire"
)

// A fake server that answers one route the way wilco does.
func fakeServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/instructions":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":"I-1","agent":"claude","content":"Run go vet ./...","state":"pending","retry_count":0,"max_retries":3}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"no agent ghost"}}`)
		}
	}))
}

func ExampleClient_Instruct() {
	srv := fakeServer()
	defer srv.Close()
	c := client.New(srv.URL, "admin-token")

	in, err := c.Instruct(context.Background(), wire.CreateInstruction{Agent: "claude", Content: "Run go vet ./..."})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(in.ID, in.State, in.MaxRetries)
	// Output: I-1 pending 3
}

func ExampleAPIError() {
	srv := fakeServer()
	defer srv.Close()
	c := client.New(srv.URL, "admin-token")

	_, err := c.Agent(context.Background(), "ghost")
	if client.IsNotFound(err) {
		fmt.Println("wilco:", err)
	}
	// Output: wilco: not_found: no agent ghost
}
