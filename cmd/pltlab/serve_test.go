package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func TestServeUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no page", nil, "exactly one of --pages"},
		{"both", []string{"--spec", "1x1KB", "--pages", "."}, "exactly one of --pages"},
		{"spec", []string{"--spec", "1xfoo"}, "bad --spec"},
		{"har and spec", []string{"--spec", "1x1KB", "--har", "x.har"}, "exactly one of --pages"},
		{"har missing", []string{"--har", "/does/not/exist.har"}, `bad --har "/does/not/exist.har"`},
		{"har not a HAR", []string{"--har", "serve_test.go"}, `bad --har "serve_test.go": not JSON of a HAR`},
		{"pages", []string{"--pages", "/does/not/exist"}, `bad --pages "/does/not/exist"`},
		{"protocols", []string{"--spec", "1x1KB", "--protocols", "h2,quic"}, `bad --protocols "h2,quic"`},
		{"tcp-cc", []string{"--spec", "1x1KB", "--tcp-cc", "vegas"}, `bad --tcp-cc "vegas"`},
		{"tls", []string{"--spec", "1x1KB", "--tls", "1.1"}, `bad --tls "1.1"`},
		{"addr", []string{"--spec", "1x1KB", "--addr", "8443"}, `bad --addr "8443"`},
		{"h1-addr", []string{"--spec", "1x1KB", "--h1-addr", "localhost:70000"}, `bad --h1-addr`},
		{"cert-out file", []string{"--spec", "1x1KB", "--addr", "127.0.0.1:0", "--cert-out", "serve_test.go"}, "bad --cert-out serve_test.go: not a directory"},
		{"cert-out below a file", []string{"--spec", "1x1KB", "--addr", "127.0.0.1:0", "--cert-out", "serve_test.go/certs"}, "bad --cert-out serve_test.go/certs"},
		{"host", []string{"--spec", "1x1KB", "--addr", "127.0.0.1:0", "--host", "a b"}, `host "a b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newRootCmd()
			root.SetArgs(append([]string{"serve"}, tt.args...))
			root.SetOut(io.Discard)
			err := root.ExecuteContext(context.Background())
			if !isUsage(err) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want a one-line usage error mentioning %q", err, tt.want)
			}
		})
	}
}

// TestServeSpecJSON runs 'serve --spec --json' on free ports, reads the facts, fetches the page
// over h1 and checks that the generated page is removed after the interrupt.
func TestServeSpecJSON(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	root := newRootCmd()
	root.SetArgs([]string{"serve", "--spec", "2x2KB", "--addr", "127.0.0.1:0", "--json"})
	root.SetOut(pw)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); pw.Close() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("read facts: %v (command: %v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	var facts struct {
		Host, SPKI string
		Addrs      map[string]string `json:"addrs"`
		PageDir    string            `json:"page_dir"`
		URLs       map[string]string
		Objects    int
		TotalBytes int64 `json:"total_bytes"`
	}
	if err := json.Unmarshal([]byte(line), &facts); err != nil {
		t.Fatalf("facts %q: %v", line, err)
	}
	if facts.Host != "plt.test" || facts.SPKI == "" || len(facts.URLs) != 3 || facts.Objects != 2 || facts.TotalBytes != 4000 {
		t.Errorf("facts %s", line)
	}
	tr := &http.Transport{TLSClientConfig: insecureTLS(), Proxy: nil}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + facts.Addrs["h1"] + "/img/0001.jpg")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || n != 2000 {
		t.Errorf("GET object: %s, %d bytes", resp.Status, n)
	}
	if _, err := os.Stat(facts.PageDir); err != nil {
		t.Fatalf("page_dir %q: %v", facts.PageDir, err)
	}
	cancel()
	if err := <-done; err != nil {
		if code, _ := exitCode(context.Background(), err); code != 130 {
			t.Fatalf("serve after interrupt: %v (exit %d, want 130)", err, code)
		}
	}
	if _, err := os.Stat(facts.PageDir); !os.IsNotExist(err) {
		t.Errorf("temporary page directory %s left behind (%v)", facts.PageDir, err)
	}
}

func insecureTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, ServerName: "plt.test", NextProtos: []string{"http/1.1"}}
}
