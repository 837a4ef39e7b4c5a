// go-database-sql: a target of the tuning set (tests/targets/), built after the catalogue's
// entry for Go's database/sql (catalogue/pools.toml: frames `database/sql.(*DB).conn`).
//
// Every request runs `SELECT pg_sleep(SLEEP)` through a database/sql DB (pgx v5's stdlib driver)
// whose pool the service capped with db.SetMaxOpenConns(N), then answers 200. database/sql opens
// no more than N connections; a handler that finds them all busy waits inside (*DB).conn for one
// to be put back (sql.go: "Out of free connections or we were asked not to use one. If we're not
// allowed to open any more connections, make a request and wait."). With N = 6 and 100 ms
// queries the truth by hand is 6 connections × 100 ms = 60 req/s, kind blocking-pool 6.
//
// Usage: go-database-sql -port 0 -dsn postgres://postgres@127.0.0.1:5432/postgres
//
//	[-max-open 6] [-sleep 0.1] [-pprof]
//
// With -pprof it also serves net/http/pprof under /debug/pprof/ on the same port.
// The first stdout line is "listening on 127.0.0.1:PORT".
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

func main() {
	port := flag.Int("port", 0, "TCP port to listen on (0: any free port)")
	dsn := flag.String("dsn", "", "PostgreSQL connection string (required)")
	maxOpen := flag.Int("max-open", 6, "db.SetMaxOpenConns: the most connections open at once")
	sleep := flag.Float64("sleep", 0.1, "seconds each request's query sleeps (pg_sleep)")
	withPprof := flag.Bool("pprof", false, "also serve net/http/pprof under /debug/pprof/")
	flag.Parse()
	if *dsn == "" {
		fmt.Fprintln(os.Stderr, "go-database-sql: -dsn is required (e.g. postgres://postgres@127.0.0.1:5432/postgres)")
		os.Exit(2)
	}
	db, err := sql.Open("pgx", *dsn)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-database-sql: cannot open the database: %v\n", err)
		os.Exit(2)
	}
	defer db.Close()
	db.SetMaxOpenConns(*maxOpen)
	// Kept, not closed and reopened: database/sql keeps 2 idle connections by default and closes
	// the rest as they come back, so under load it churns them, and a connection it has let go
	// is still established while it closes (a full test run saw 12 to PostgreSQL for a cap of 6).
	db.SetMaxIdleConns(*maxOpen)

	mux := http.NewServeMux()
	if *withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, err := db.ExecContext(r.Context(), "SELECT pg_sleep($1)", *sleep); err != nil {
			http.Error(w, "database: "+err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "ok")
	})

	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-database-sql: cannot listen on port %d: %v\n", *port, err)
		os.Exit(2)
	}
	fmt.Printf("listening on %s\n", listener.Addr().String())
	log.Fatal(http.Serve(listener, mux))
}
