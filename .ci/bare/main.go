// Command bare is the baseline of .ci/bench.sh: a bare httprouter server
// answering every benchmarked path with a small fixed JSON body, so the
// ratio opsagent/bare says what the product costs above Go's HTTP stack on
// the same machine in the same run.
//
//	go build -o bare ./.ci/bare && ./bare 127.0.0.1:0   (prints the bound address)
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/julienschmidt/httprouter"
)

func main() {
	addr := "127.0.0.1:0"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	body := []byte(`{"hello":"world"}`)
	hello := func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
	r := httprouter.New()
	for _, p := range []string{"/api/auth/me", "/api/tasks", "/healthz"} {
		r.GET(p, hello)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	_ = http.Serve(ln, r)
}
