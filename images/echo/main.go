// Command echo is the image `modelfleet.local/echo` that the local cluster's real node runs: an HTTP
// echo server for the echo InferenceService, plus a few one-shot subcommands so tests can look
// inside a real container without a shell in the image.
//
//	echo [-listen ADDR] [-text TEXT]  serve HTTP (the default; flags spelled as hashicorp/http-echo's)
//	echo env                          print the environment, one NAME=value a line, sorted
//	echo cat FILE...                  print files
//	echo write FILE TEXT              write TEXT to FILE (exit 1 with the error, e.g. on a read-only mount)
//	echo exit CODE                    exit with CODE (a training container that fails)
//	echo sleep SECONDS                sleep, then exit 0 (at once on SIGTERM)
//
// The server answers every path with 200 and a body naming the text, the request line, the pod
// (its hostname) and the MODEL_FLEET_* environment; `/status/NNN` answers with status NNN (a failing
// readiness path). Every request is logged to stdout with its User-Agent, so a test can see the
// kubelet's probes (`kube-probe/...`). SIGTERM or SIGINT stops it within two seconds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		os.Exit(run(os.Args[1], os.Args[2:]))
	}
	listen := flag.String("listen", ":8080", "address to serve HTTP on")
	text := flag.String("text", "", "first line of every answer")
	flag.Parse()
	if err := serve(*listen, *text); err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}

// run executes one subcommand and returns the process exit code.
func run(cmd string, args []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "echo %s: %v\n", cmd, err)
		return 1
	}
	switch cmd {
	case "env":
		env := os.Environ()
		sort.Strings(env)
		for _, e := range env {
			fmt.Println(e)
		}
	case "cat":
		for _, f := range args {
			b, err := os.ReadFile(f)
			if err != nil {
				return fail(err)
			}
			os.Stdout.Write(b)
		}
	case "write":
		if len(args) != 2 {
			return fail(errors.New("usage: echo write FILE TEXT"))
		}
		if err := os.WriteFile(args[0], []byte(args[1]), 0o644); err != nil {
			return fail(err)
		}
		fmt.Printf("wrote %d bytes to %s\n", len(args[1]), args[0])
	case "exit":
		code, err := strconv.Atoi(strings.Join(args, ""))
		if err != nil {
			return fail(errors.New("usage: echo exit CODE"))
		}
		fmt.Printf("exiting with %d\n", code)
		return code
	case "sleep":
		secs, err := strconv.ParseFloat(strings.Join(args, ""), 64)
		if err != nil {
			return fail(errors.New("usage: echo sleep SECONDS"))
		}
		// PID 1 of a container gets no default signal handling: stop on SIGTERM like the server.
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
		select {
		case <-time.After(time.Duration(secs * float64(time.Second))):
		case sig := <-stop:
			fmt.Printf("echo sleep: %s, exiting\n", sig)
		}
	default:
		return fail(errors.New("unknown subcommand (env, cat, write, exit, sleep; or flags -listen, -text to serve)"))
	}
	return 0
}

// serve answers HTTP on listen until SIGTERM or SIGINT.
func serve(listen, text string) error {
	pod, _ := os.Hostname()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := fmt.Sprintf("%s %s %s", r.Method, r.URL.RequestURI(), r.Proto)
		fmt.Printf("%s %q ua=%q\n", r.RemoteAddr, line, r.UserAgent())
		status := http.StatusOK
		if code, ok := strings.CutPrefix(r.URL.Path, "/status/"); ok {
			if n, err := strconv.Atoi(code); err == nil && n >= 200 && n <= 599 {
				status = n
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		if text != "" {
			fmt.Fprintln(w, text)
		}
		fmt.Fprintf(w, "request: %s\npod: %s\n", line, pod)
		env := os.Environ()
		sort.Strings(env)
		for _, e := range env {
			if strings.HasPrefix(e, "MODEL_FLEET_") {
				fmt.Fprintln(w, e)
			}
		}
	})
	server := &http.Server{Addr: listen, Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	errs := make(chan error, 1)
	go func() { errs <- server.ListenAndServe() }()
	fmt.Printf("echo: serving on %s as pod %s\n", listen, pod)
	select {
	case err := <-errs:
		return err
	case sig := <-stop:
		fmt.Printf("echo: %s, shutting down\n", sig)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return server.Shutdown(ctx)
	}
}
