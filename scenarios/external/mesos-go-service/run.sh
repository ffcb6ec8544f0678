#!/bin/sh
# Builds the mesos-go service scheduler of this directory, then runs it in
# this process (exec). The build is Go's GOPATH mode, offline, on the
# mesos-go library of Debian's golang-github-mesos-mesos-go-dev (GOPATH
# /usr/share/gocode, or MESOS_GO_GOPATH); Go's build cache makes a rebuild
# quick. With --build it only builds. CLUSTERSIM_GO names the go command
# (default: go on the PATH).
set -e
here=$(cd "$(dirname "$0")" && pwd)
go=${CLUSTERSIM_GO:-go}
gopath=${MESOS_GO_GOPATH:-/usr/share/gocode}
if ! command -v "$go" >/dev/null 2>&1; then
  echo "mesos-go-service: cannot build: Go is not installed ('$go' not found); on Debian or Ubuntu: apt-get install golang-go golang-github-mesos-mesos-go-dev" >&2
  exit 2
fi
if [ ! -d "$gopath/src/github.com/mesos/mesos-go/api/v1/lib" ]; then
  echo "mesos-go-service: cannot build: no mesos-go under $gopath (apt-get install golang-github-mesos-mesos-go-dev, or set MESOS_GO_GOPATH)" >&2
  exit 2
fi
out=${TMPDIR:-/tmp}/clustersim-mesos-go-service-$(id -u)
mkdir -p "$out"
if [ -z "$HOME" ] && [ -z "$GOCACHE" ] && [ -z "$XDG_CACHE_HOME" ]; then export GOCACHE="$out/cache"; fi
# Built beside the binary and renamed over it: two runs at once do not clash.
cd "$here"
GO111MODULE=off GOPATH="$gopath" GOPROXY=off GOFLAGS= CGO_ENABLED=0 "$go" build -o "$out/mesos-go-service.$$" .
mv -f "$out/mesos-go-service.$$" "$out/mesos-go-service"
if [ "$1" = "--build" ]; then exit 0; fi
exec "$out/mesos-go-service"
